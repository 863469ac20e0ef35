"""``llm-coop envs`` marks deprecated ids with the id to use, and says once, not per env, how to give
an env the dataset it lacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_envs(*flags: str) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "LLM_COOP_DATA_DIR"}
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}  # no data folder, no Hub
    result = subprocess.run([sys.executable, "-m", "llm_coop_envs.cli", "envs", *flags], capture_output=True,
                            text=True, cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0 and "Warning" not in result.stderr, result.stderr
    return result.stdout.splitlines()


def test_deprecated_ids_are_marked_with_the_id_to_use():
    lines = run_envs()
    assert "coop_basics-v0  (deprecated: use coop_basics-v2)" in lines
    assert "coop_basics-v2" in lines and "coop_procedural-v1" in lines


def test_the_ways_to_give_a_dataset_are_said_once():
    lines = run_envs("--verbose")
    (mbpp,) = [line for line in lines if line.startswith("mbpp-v2 ")]
    assert "cannot be made here: No data for 'mbpp'" in mbpp and "LLM_COOP_DATA_DIR" not in mbpp
    assert sum("LLM_COOP_DATA_DIR" in line for line in lines) == 1
    (basics,) = [line for line in lines if line.startswith("coop_basics-v2 ")]
    assert "agents=helper,main" in basics and "deprecated" not in basics
