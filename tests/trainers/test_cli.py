"""The command line on the real coop_humaneval-v1 env (real data, real sandbox) with a tiny local model."""

import json

import pytest

from tests.trainers.conftest import build_model
from trainers.cli import before_after_table, main, train_command


@pytest.fixture()
def tiny_model_dir(tmp_path, tokenizer):
    folder = tmp_path / "tiny-model"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_train_command_on_coop_humaneval_with_before_after_table(tmp_path, tiny_model_dir, data_dir, capsys):
    code = train_command([
        "--env", "coop_humaneval-v1", "--model", str(tiny_model_dir), "--steps", "2", "--run-dir", str(tmp_path),
        "--run-name", "cli", "--eval-problems", "2", "group_size=2", "sampling.max_new_tokens=8",
        "progress_bar=false", "tensorboard=false", "lora_r=2",
    ])
    assert code == 0
    out = capsys.readouterr().out
    assert "| metric | before | after | change [95 % interval] |" in out and "| pass rate |" in out
    assert "acc (share of tests passed)" in out
    run = tmp_path / "cli"
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if "reward/mean" in r]
    assert len(train_rows) == 2 and "reward/tests" in train_rows[0]  # the env's named components are logged
    evals = [r for r in rows if "eval/reward" in r]
    assert [r["train/step"] for r in evals] == [0, 2]
    assert {"eval/pass_rate", "eval/tests_passed", "eval/coop_rate"} <= set(evals[0])  # a coding env reports both
    summary = json.loads((run / "eval.json").read_text())
    assert {"before", "after", "steps", "problems", "task_ids"} <= set(summary) and summary["steps"] == 2
    assert len(summary["task_ids"]) == summary["problems"] == 2
    assert (run / "final" / "helper" / "adapter_config.json").is_file()

    again = train_command(["--env", "coop_humaneval-v1", "--model", str(tiny_model_dir), "--steps", "2",
                           "--run-dir", str(tmp_path), "--run-name", "cli"])
    assert again == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "overwrite=true" in err and "fresh run_name" in err
    assert len((run / "metrics.jsonl").read_text().splitlines()) == len(rows)  # the first run is intact


def test_help_config_and_bad_input(capsys):
    assert train_command(["--help-config"]) == 0
    assert "group_size" in capsys.readouterr().out
    assert train_command(["joint_mode=diagonal"]) == 2
    assert "joint_mode" in capsys.readouterr().err
    assert main(["nonsense"]) == 2


def test_before_after_table_shows_the_share_of_tests_passed():
    record = {"problems": 4, "before": {"reward": 0.5, "pass_rate": 0.25, "tests_passed": 0.4},
              "after": {"reward": 1.0, "pass_rate": 0.5, "tests_passed": 0.625}}
    lines = before_after_table(record).strip().splitlines()
    assert lines[0] == "| agents | mean reward | pass rate | acc (tests passed) |"
    assert lines[2] == "| before training | 0.500 | 1/4 (25%) | 40.0% |"
    assert lines[3] == "| after training | 1.000 | 2/4 (50%) | 62.5% |"
    for result in record["before"], record["after"]:
        result["tests_passed"] = None  # an env without tests: no such column
    assert "acc" not in before_after_table(record)
