import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.slow
def test_two_cpu_processes_stay_in_sync(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    # torchrun is the launcher accelerate itself uses for multi-process runs; gloo on CPU.
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29517",
               str(WORKER), str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert sorted(r["rank"] for r in results) == [0, 1] and all(r["world"] == 2 for r in results)
    assert results[0]["seeds"] != results[1]["seeds"]  # each rank rolls out its own problems
    assert results[0]["sums"] == results[1]["sums"]  # gradients were averaged: identical replicas
