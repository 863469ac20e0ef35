"""Trainer run folders written by hand in the trainer's format, for the benchmark's reader and report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from benchmarks.learning.plan import Budget

TASKS = [f"basics/{i}" for i in range(6)]


def write_run(runs_dir: Path, name: str, solved_by_step: dict[int, list[bool]], *, pair: bool = True,
              tests_passed: float = 0.5, tokens_per_step: int = 100, env_steps_per_step: int = 4) -> Path:
    """One finished run: an evaluation file per step, metrics rows and eval.json."""
    run_dir = runs_dir / name
    (run_dir / "eval").mkdir(parents=True)
    rows = []
    for step, solved in solved_by_step.items():
        records = [
            {"task_id": task, "reward": 3.0 if ok else 1.0, "solved": ok, "tests_passed": 1.0 if ok else tests_passed,
             "uses_helper": ok if pair else None}
            for task, ok in zip(TASKS, solved)
        ]
        (run_dir / "eval" / f"step_{step:05d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        rows.append({"train/step": step, "eval/pass_rate": sum(solved) / len(solved)})
    last = max(solved_by_step)
    for step in range(1, last + 1):
        rows.append({"train/step": step, "reward/mean": 1.0, "perf/generated_tokens": tokens_per_step,
                     "train/joint_samples": env_steps_per_step, "perf/step_s": 2.0})
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples = [{"step": step, "replies": {"helper": f"def aux():  # step {step}\n\n    return {k}", "main": "x"},
                "reward": float(step), "components": {"structure": 1.0}} for step in range(1, last + 1) for k in (0, 1)]
    (run_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in samples))
    first = solved_by_step[min(solved_by_step)]
    final = solved_by_step[last]
    (run_dir / "eval.json").write_text(json.dumps({
        "before": {"pass_rate": sum(first) / len(first)}, "after": {"pass_rate": sum(final) / len(final)},
        "steps": last, "problems": len(TASKS), "task_ids": TASKS,
    }))
    return run_dir


def write_meta(runs_dir: Path, budget: Budget, algorithms=("magrpo", "grpo"), seeds=(0, 1), env="coop_basics-v0") -> None:
    runs_dir.mkdir(parents=True, exist_ok=True)
    meta = {
        "env": env, "algorithms": list(algorithms), "seeds": list(seeds), "budget": dataclasses.asdict(budget),
        "overrides": [], "model": "a test model",
        "package_version": "0", "machine": {"cores": 2, "cpu": "test", "python": "3"},
        "sessions": [{"command": "llm-coop bench", "uptime_start": "load average: 1.00", "uptime_end": "load average: 2.00"}],
    }
    (runs_dir / "bench.json").write_text(json.dumps(meta))
