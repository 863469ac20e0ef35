"""The command lines follow the usual conventions: --help exits 0 with examples, --version prints the version."""

import subprocess
import sys
from pathlib import Path

import pytest

import llm_coop_envs
from llm_coop_envs.cli import main as llm_coop

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = ("envs", "train", "pull-model", "eval", "bench")


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_python_m_trainers_help_and_version():
    help_ = run("-m", "trainers", "--help")
    assert help_.returncode == 0 and "Examples:" in help_.stdout and "train" in help_.stdout
    version = run("-m", "trainers", "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"llm-coop-envs {llm_coop_envs.__version__}"
    unknown = run("-m", "trainers", "nonsense")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1


def test_llm_coop_version(capsys):
    with pytest.raises(SystemExit) as end:
        llm_coop(["--version"])
    assert end.value.code == 0 and llm_coop_envs.__version__ in capsys.readouterr().out


@pytest.mark.parametrize("command", [(), *((name,) for name in SUBCOMMANDS)])
def test_every_help_has_examples(command, capsys):
    with pytest.raises(SystemExit) as end:
        llm_coop([*command, "--help"])
    assert end.value.code == 0
    out = capsys.readouterr().out
    assert "Examples:" in out and "llm-coop" in out.split("Examples:")[1]
