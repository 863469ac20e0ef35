"""The README quickstart and ``llm-coop train`` with no flags need no network and no data folder:
the quickstart's env and the trainer's default env ship inside the package, and the quickstart
prints what its comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def offline_env() -> dict[str, str]:
    """This environment with no data folder and the Hub switched off (a clone on a machine without network)."""
    env = {key: value for key, value in os.environ.items() if key != "LLM_COOP_DATA_DIR"}
    return {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def quickstart() -> str:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_quickstart_runs_offline_and_prints_what_it_says(tmp_path):
    result = subprocess.run([sys.executable, "-c", quickstart()], capture_output=True, text=True, cwd=tmp_path,
                            env=offline_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("4.0 {") and "'tests': 1.0" in last, last  # "4.0 (the maximum), and its parts"
    assert "Warning" not in result.stderr, result.stderr  # no deprecated id


def test_the_trainers_default_env_is_made_offline(tmp_path):
    probe = ("from trainers.config import load_config\nimport llm_coop_envs\ncfg = load_config()\n"
             "env = llm_coop_envs.make(cfg.env, **cfg.env_kwargs)\nprint(cfg.env, len(env.task))")
    result = subprocess.run([sys.executable, "-W", "error::FutureWarning", "-c", probe], capture_output=True, text=True,
                            cwd=tmp_path, env=offline_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    name, problems = result.stdout.split()
    assert name == "coop_basics-v2" and int(problems) > 0
