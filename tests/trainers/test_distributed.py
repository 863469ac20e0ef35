"""Two CPU processes launched the way users launch many GPUs: ``accelerate launch --multi_gpu``.

Accelerate's ``--cpu`` flag starts a single process unless MPI is installed (it needs
``--mpirun_hostfile``); its ``--multi_gpu`` launcher is torchrun, which on a machine without a GPU
starts plain CPU processes that join over gloo. See docs/training.md, "Many processes".
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("ddp_worker.py")


def accelerate_command(out_dir: Path) -> list[str]:
    # Every option given so no user config or default fills in; port 0 asks for a free port, so
    # parallel CI jobs do not collide.
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
            "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0",
            str(WORKER), str(out_dir)]


@pytest.mark.slow
def test_two_cpu_processes_stay_in_sync(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(accelerate_command(tmp_path), capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert sorted(r["rank"] for r in results) == [0, 1] and all(r["world"] == 2 for r in results)
    assert results[0]["seeds"] != results[1]["seeds"]  # each rank rolls out its own problems
    assert results[0]["sums"] == results[1]["sums"]  # gradients were averaged: identical replicas
    import torch

    rngs = torch.load(tmp_path / "run" / "checkpoints" / "step-00000002" / "rng.pt", weights_only=False)
    assert len(rngs) == 2  # every rank's generators, so each rank resumes its own
    assert not torch.equal(rngs[0]["torch"], rngs[1]["torch"])
