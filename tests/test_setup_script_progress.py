"""``scripts/setup.sh`` says what it does at each stage, and lists what pip collects in the long
installs, instead of minutes of silence. Run here against a stand-in interpreter that installs nothing."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/calls.log"
case "$*" in *"install -q"*) ;; *install*) echo "Collecting some-package"; echo "Requirement already satisfied: x";
  echo "Successfully installed some-package-1.0";; esac
"""


def test_every_stage_is_announced_and_pip_lists_what_it_collects(tmp_path):
    if os.geteuid() == 0 and shutil.which("bwrap") is None:
        pytest.skip("as root without bwrap the script would install it with apt-get")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    result = subprocess.run(["bash", "scripts/setup.sh"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    stages = [line for line in lines if line.startswith("setup [")]
    assert [line[len("setup ["):].split("/")[0] for line in stages] == ["1", "2", "3", "4", "5"], lines
    assert lines[-1].startswith("setup: done in")
    assert lines.count("  Collecting some-package") == 2  # torch, then the project
    assert not any("Requirement already satisfied" in line for line in lines)
    calls = (python.parent / "calls.log").read_text().splitlines()
    assert calls[-1].startswith("-m pip install -e .[train,eval,dev,docs,claims]")
