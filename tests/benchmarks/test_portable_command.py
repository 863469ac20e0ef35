"""Committed results name no path of the machine that ran them: commands are recorded portably."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchmarks.learning.runner import portable_command

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def test_the_interpreter_and_paths_inside_the_working_folder_are_recorded_portably(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = [sys.executable, "-m", "trainers", "train", "--run-dir", str(tmp_path / "runs" / "a"), "x=a b"]
    assert portable_command(command) == "python -m trainers train --run-dir runs/a 'x=a b'"


def test_no_committed_result_names_a_home_or_work_folder_of_a_machine():
    home = os.path.expanduser("~")
    leaks = [str(path.relative_to(RESULTS)) for path in RESULTS.rglob("*") if path.is_file()
             and path.suffix in {".md", ".json", ".jsonl", ".csv", ".txt"}
             and any(marker in path.read_text(encoding="utf-8", errors="replace") for marker in ("/work/", home + "/"))]
    assert not leaks, f"results that name a machine's folders: {leaks}"
