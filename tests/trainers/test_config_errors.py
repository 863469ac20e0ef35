"""Every configuration error of ``llm-coop train`` is one line on stderr, exit code 2, before any model loads.

The command runs in a subprocess (the real entry point ``python -m trainers``), so what is checked is
exactly what a user sees.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from trainers.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]

# Runs the CLI, then reports whether transformers (hence a model) was ever imported.
RUNNER = """
import sys
{setup}
from trainers.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as end:  # argparse ends this way
    code = end.code
print("transformers imported:", "transformers" in sys.modules)
raise SystemExit(code)
"""


def run_cli(*args, setup=""):
    return subprocess.run(
        [sys.executable, "-c", RUNNER.format(setup=setup), *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
    )


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("llm-coop train: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "transformers imported: False" in result.stdout


def test_numbers_from_the_command_line_and_yaml_are_coerced(tmp_path):
    cfg = load_config(overrides=["learning_rate=1e-4", "steps=3", "sampling.max_new_tokens=16", "resume=false"])
    assert cfg.learning_rate == 1e-4 and isinstance(cfg.learning_rate, float)
    assert cfg.steps == 3 and cfg.sampling.max_new_tokens == 16 and cfg.resume is False
    (tmp_path / "c.yaml").write_text("learning_rate: 1e-4\nweight_decay: '0.01'\nrun_name: 2024\n")
    cfg = load_config(tmp_path / "c.yaml")  # YAML 1.1 reads 1e-4 as a string
    assert cfg.learning_rate == 1e-4 and cfg.weight_decay == 0.01 and cfg.run_name == "2024"


def test_a_value_of_the_wrong_type_is_one_line():
    assert_one_line_error(run_cli("train", "steps=abc"), "steps:", "valid integer", "'abc'")


def test_a_flag_of_the_wrong_type_is_one_line():
    assert_one_line_error(run_cli("train", "--steps", "abc"), "--steps", "invalid int value")


def test_an_unknown_key_suggests_the_nearest():
    assert_one_line_error(run_cli("train", "learning_rat=1e-4"), "learning_rat", "did you mean learning_rate?")
    with pytest.raises(ConfigError, match="did you mean sampling.temperature"):
        load_config(overrides=["sampling.temprature=0.5"])


def test_broken_yaml_is_one_line(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("steps: 3\nsampling: {temperature: 0.5\n")
    assert_one_line_error(run_cli("train", "--config", str(broken)), "not valid YAML", "line")


def test_a_missing_model_folder_is_one_line():
    assert_one_line_error(run_cli("train", "--model", "/nonexistent"), "'/nonexistent' is not a folder", "Hub id")


def test_an_unknown_env_or_env_argument_is_one_line():
    assert_one_line_error(run_cli("train", "--env", "coop_humaneva-v1"), "coop_humaneval-v1")
    assert_one_line_error(run_cli("train", "--env", "coop_basics-v2", "env_kwargs.num_turn=2"), "num_turn",
                          "did you mean 'num_turns'?")
    assert_one_line_error(run_cli("train", "--algo", "magrpoo"), "No algorithm named 'magrpoo'")


def test_an_unreachable_hub_model_is_one_line_in_seconds():
    # HF_HUB_OFFLINE stands for a machine without the Hub; the id is in no cache
    result = run_cli("train", "--model", "no-such-org/no-such-model", setup="import os; os.environ['HF_HUB_OFFLINE'] = '1'")
    assert_one_line_error(result, "'no-such-org/no-such-model' is not in the Hugging Face cache", "--model default",
                          "local model folder")


def test_a_bad_choice_and_a_missing_config_file_are_one_line(tmp_path):
    assert_one_line_error(run_cli("train", "joint_mode=crosss"), "did you mean cross?")
    assert_one_line_error(run_cli("train", "--config", str(tmp_path / "none.yaml")), "does not exist")


def test_training_without_the_extras_says_how_to_install():
    result = run_cli("train", "--preset", "cpu-demo", setup="sys.modules['yaml'] = None")
    assert_one_line_error(result, "missing: yaml", "pip install 'llm-coop-envs[train]'")
    with_yaml_missing = "import sys; sys.modules['yaml'] = None\nfrom trainers.config import load_config\n"
    probe = subprocess.run(
        [sys.executable, "-c", with_yaml_missing + "load_config(overrides=['steps=2'])"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert "ConfigError: PyYAML is needed" in probe.stderr and "llm-coop-envs[train]" in probe.stderr
