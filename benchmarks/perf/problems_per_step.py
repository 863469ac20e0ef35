"""``python -m benchmarks.perf.problems_per_step``: learning throughput at P = 1, 2, 4, 8 problems per step.

One MAGRPO trainer (SmolLM2-135M-Instruct, LoRA r=8, 2 agents, G=4, fp32) on P distinct coding
prompts per step (the trainer-step benchmark's prompt, one variant per problem), every reply exactly
``--tokens`` new tokens (end-of-sequence suppressed until then) and a graded reward (the share of the
letter e, as in :mod:`benchmarks.perf.trainer_step`) so that every reply has a non-zero advantage: the
work per joint sample is fixed, none is skipped. A step with P problems decodes all agents' rows of all
problems as one batch and takes one optimizer step per agent over all of them.

Per joint sample, the step's time splits into generation (the backend's calls), scoring (the rest of
the rollout: env steps) and the update. With this reward scoring is nearly free; the sandbox's share
on a coding env is the rollout's remainder in a real run (``perf/rollout_s``) and is measured by
:mod:`benchmarks.perf.sandbox_throughput`. The P values run interleaved, one step of each per repeat,
after one warm-up step each, so load drifts hit every P alike; ratios against P = 1 are formed within
each repeat and reported as median (range). Results: ``benchmarks/results/problems_per_step.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.perf.trainer_step import PROMPT, share_of_e, spread, uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "problems_per_step.md"


class _Prompts:
    """P distinct prompts (a variant number each), the graded reward of the trainer-step benchmark."""

    def __init__(self, agents=("helper", "main"), size: int = 64):
        self.agents, self.size = agents, size

    def __len__(self):
        return self.size

    def task_id(self, index):
        return f"bench/{index}"

    def prompt(self, index, agent):
        return f"{PROMPT} (Variant {index}; you are the {agent}.)"

    def evaluate(self, index, replies):
        from llm_coop_envs.core import Evaluation, RewardResult

        return Evaluation(RewardResult.from_components({a: share_of_e(r) for a, r in replies.items()}))


def make_trainer(tokens: int, run_dir: str, temperature: float = 1.0, top_p: float = 1.0):
    from llm_coop_envs.core import CoopEnv
    from trainers.config import TrainConfig
    from trainers.generation.transformers_backend import TransformersBackend
    from trainers.trainer import Trainer

    cfg = TrainConfig(
        env="bench-v0", model="default", group_size=4, steps=1000, lora_r=8, lora_alpha=16,
        sampling={"temperature": temperature, "top_p": top_p, "max_new_tokens": tokens}, run_dir=run_dir,
        run_name="problems-per-step", overwrite=True, tensorboard=False, progress_bar=False, log_samples=0,
        micro_batch_size=8, eval_problems=0, learning_rate=1e-5,
    )
    return Trainer(cfg, env=CoopEnv(_Prompts()),
                   backend=lambda policies: TransformersBackend(policies, dtype="float32", min_new_tokens=tokens))


def timed_step(trainer, problems: int) -> dict[str, float]:
    """One training step with ``problems`` problems; seconds of generation, scoring and update."""
    trainer.cfg = dataclasses.replace(trainer.cfg, problems_per_step=problems)
    generating = [0.0]
    sample = trainer.sample

    def timed_sample(requests, n):
        start = time.perf_counter()
        try:
            return sample(requests, n)
        finally:
            generating[0] += time.perf_counter() - start

    trainer.sample = timed_sample
    try:
        metrics = trainer.train_step()
    finally:
        trainer.sample = sample
    trainer.step += 1
    samples = problems * trainer.cfg.group_size
    return {
        "step_s": metrics["perf/step_s"], "generation_s": generating[0],
        "scoring_s": metrics["perf/rollout_s"] - generating[0], "update_s": metrics["perf/update_s"],
        "joint_samples": samples, "tokens": metrics["perf/generated_tokens"], "threads": metrics.get("perf/threads", 0),
    }


def report(command: str, uptimes: tuple[str, str], tokens: int, runs: dict[int, list[dict[str, float]]]) -> str:
    import torch

    base = runs[1]
    lines = [
        "# Learning throughput: problems per step", "",
        f"Command: `{command}`", "",
        f"torch {torch.__version__}, threads per step: "
        f"{sorted({int(r['threads']) for rows in runs.values() for r in rows})}.",
        f"`uptime` at start: `{uptimes[0]}`; at end: `{uptimes[1]}`.", "",
        f"Settings: P distinct coding prompts, graded reward (every reply trained), MAGRPO, SmolLM2-135M-Instruct "
        f"fp32, LoRA r=8 on q/k/v/o, 2 agents, G=4, exactly {tokens} new tokens per reply, temperature 1.0, "
        "micro-batch 8. One warm-up "
        f"step per P, then {len(base)} repeats of one step per P, interleaved.", "",
        "| P | joint samples | step | joint samples / min | × P=1 | generated tokens / s (generation) | × P=1 "
        "| per joint sample: generation | scoring | update |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for problems, rows in runs.items():
        per_min = [60 * r["joint_samples"] / r["step_s"] for r in rows]
        tok_s = [r["tokens"] / r["generation_s"] for r in rows]
        ratio = [p / (60 * b["joint_samples"] / b["step_s"]) for p, b in zip(per_min, base)]
        tok_ratio = [t / (b["tokens"] / b["generation_s"]) for t, b in zip(tok_s, base)]
        per = {k: statistics.median(r[k] / r["joint_samples"] for r in rows) for k in ("generation_s", "scoring_s", "update_s")}
        lines.append(
            f"| {problems} | {int(rows[0]['joint_samples'])} | {statistics.median(r['step_s'] for r in rows):.1f} s "
            f"| {statistics.median(per_min):.1f} | {spread(ratio)} | {statistics.median(tok_s):.0f} | {spread(tok_ratio)} "
            f"| {per['generation_s']:.2f} s | {per['scoring_s']:.2f} s | {per['update_s']:.2f} s |")
    lines += ["", "Scoring is the rollout's time outside generation (here a reward on the text; a coding env's "
              "sandbox adds its own, measured by `benchmarks.perf.sandbox_throughput`). Timings on a 2-core machine "
              "are noisy; the ratios come from steps taken in the same run, interleaved."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per reply")
    parser.add_argument("--repeats", type=int, default=3, help="timed steps per P (at least 3)")
    parser.add_argument("--problems", type=int, nargs="+", default=[1, 2, 4, 8], help="P values (1 first)")
    args = parser.parse_args(argv)
    if args.repeats < 3 or args.problems[0] != 1:
        parser.error("--repeats must be at least 3 and the P values must start with 1 (the ratios' base)")
    command = "python -m benchmarks.perf.problems_per_step " + " ".join(sys.argv[1:] if argv is None else argv)
    started = uptime()
    trainer = make_trainer(args.tokens, tempfile.mkdtemp(prefix="llm-coop-bench-"))
    try:
        for problems in args.problems:
            timed_step(trainer, problems)  # warm-up
        runs: dict[int, list[dict[str, float]]] = {p: [] for p in args.problems}
        for _ in range(args.repeats):
            for problems in args.problems:
                runs[problems].append(timed_step(trainer, problems))
                print(problems, runs[problems][-1], flush=True)
    finally:
        trainer.close()
    text = report(command, (started, uptime()), args.tokens, runs)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
