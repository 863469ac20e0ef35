"""What the ``-v3`` reward adds to a MAGRPO step, side by side with ``-v2`` in one run.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.step_cost [--steps 4] [--envs tldr-v2 tldr-v4]

Trains the default model with MAGRPO at the bench's settings (1 problem per step, G = 4, at most 128
new tokens per agent, LoRA r = 8) for ``--steps`` steps on each env in turn, in fresh processes one
after the other, with the same seed and a learning rate of 1e-12 (the trainer refuses 0): both runs sample the same replies on the
same problems, so the difference of their step times is what the reward costs. The first step of each
run (model loads, caches fill) is left out. Prints the median step time per env (and rollout time, which
holds the reward), the extra time and share of ``-v3`` over ``-v2``, and ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


LEARNING_RATE = 1e-12
"""The trainer refuses a learning rate of 0; this one moves no weight far enough to change a sampled token."""


def run(env_id: str, steps: int, seed: int, folder: Path) -> list[dict]:
    """Train ``steps`` steps on ``env_id`` in a fresh process; the per-step metrics."""
    command = [
        sys.executable, "-m", "trainers", "train", "--env", env_id, "--run-dir", str(folder), "--run-name", env_id,
        f"steps={steps}", f"seed={seed}", f"learning_rate={LEARNING_RATE}", "group_size=4", "problems_per_step=1",
        "sampling.max_new_tokens=128", "sampling.temperature=1.0", "eval_problems=0", "save_every=0",
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in (folder / env_id / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if "perf/step_s" in r]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime not available"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["tldr-v2", "tldr-v4"])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"uptime at start: {uptime()}")
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for env_id in args.envs:
            rows = run(env_id, args.steps, args.seed, Path(folder))[1:]
            found[env_id] = {key: statistics.median(r[key] for r in rows) for key in ("perf/step_s", "perf/rollout_s")}
            found[env_id]["tokens"] = statistics.median(r.get("perf/generated_tokens", 0) for r in rows)
            # how many sampled pairs passed the gates and reached the language model (-v3: fluency scored)
            fluency = [r[k] for r in rows for k in r if k.startswith("reward/") and "fluency" in k]
            found[env_id]["fluency"] = statistics.mean(fluency) if fluency else None
    print(f"uptime at end: {uptime()}\n")
    print("| env | step (s, median of steps 2-) | rollout incl. reward (s) | generated tokens per step |\n|---|---|---|---|")
    for env_id, values in found.items():
        print(f"| {env_id} | {values['perf/step_s']:.2f} | {values['perf/rollout_s']:.2f} | {values['tokens']:.0f} |"
              + ("" if values["fluency"] is None else f" mean fluency component {values['fluency']:.2f} |"))
    base, *others = args.envs
    for env_id in others:
        extra = found[env_id]["perf/step_s"] - found[base]["perf/step_s"]
        print(f"\n{env_id} over {base}: {extra:+.2f} s per step ({extra / found[base]['perf/step_s']:+.0%}; bar: at most +20 %)")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
