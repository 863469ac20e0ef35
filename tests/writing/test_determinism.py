"""The writing reward is a function of its inputs: the same pairs score the same under any
PYTHONHASHSEED (set iteration order once changed sums in their last bit and flipped a level)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _probe_table(hash_seed: str, data_dir: Path) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT), "LLM_COOP_DATA_DIR": str(data_dir)}
    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "benchmarks.writing.probes"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_every_probe_scores_the_same_under_other_hash_seeds(data_dir):
    tables = {_probe_table(seed, data_dir) for seed in ("0", "1", "2")}
    assert len(tables) == 1
