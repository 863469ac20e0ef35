"""``python -m benchmarks.perf.eval_speed``: the held-out evaluation's time, before and after, side by side.

The trainer's greedy held-out evaluation (:func:`trainers.evaluate.evaluate`) of the untrained default
pair (SmolLM2-135M-Instruct, LoRA at init, fp32), timed in one process on one model:

* **43 problems of** ``coop_basics-v1`` (test split), under the previous generation settings (all
  prompts prefilled in one padded forward, at most 64 rows decoded together) and the current ones
  (prompts prefilled in length-ordered chunks, 128 rows together); the same replies are expected;
* the same 43 problems **one problem at a time** (``eval_mode="per_problem"``): the share of problems
  whose replies equal the batched run's;
* **300 problems of** ``coop_procedural-v0`` (test split, levels 1-3), batched, current settings.

Sampling as the CPU demo evaluates: greedy, at most 128 new tokens, replies end at their closing code
fence. Results: ``benchmarks/results/eval_speed.md`` (43 problems) and ``eval_speed_large.md`` (300).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.perf.trainer_step import uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "eval_speed.md"
RESULTS_LARGE = RESULTS.with_name("eval_speed_large.md")
SAMPLING = {"temperature": 0.0, "max_new_tokens": 128, "stop_after_code": True}


def make_trainer():
    from trainers.config import TrainConfig
    from trainers.trainer import Trainer

    cfg = TrainConfig(env="coop_basics-v1", model="default", run_dir=tempfile.mkdtemp(prefix="llm-coop-bench-"),
                      run_name="eval-speed",
                      overwrite=True, tensorboard=False, progress_bar=False, sampling=SAMPLING, eval_problems=0)
    return Trainer(cfg)


@contextlib.contextmanager
def previous_settings(backend) -> Iterator[None]:
    """The generation settings before this change: one padded prefill forward, 64 rows a batch."""
    from llm_coop_envs.lm import engine

    saved = engine.PREFILL_TOKENS, backend.max_batch_rows
    engine.PREFILL_TOKENS, backend.max_batch_rows = 10**12, 64
    try:
        yield
    finally:
        engine.PREFILL_TOKENS, backend.max_batch_rows = saved


def timed_eval(trainer, env_id: str, env_kwargs: dict, problems: int, mode: str = "batched"):
    """(seconds, result, replies by task id) of one greedy evaluation."""
    import llm_coop_envs
    from trainers.evaluate import evaluate

    replies: dict[str, list[str]] = {}
    generate = trainer.backend.generate

    def recording(requests):
        completions = generate(requests)
        for request, done in zip(requests, completions):
            replies.setdefault(request.observation, []).append(done[0].text)
        return completions

    trainer.backend.generate = recording
    cfg = dataclasses.replace(trainer.cfg, eval_mode=mode)
    env = llm_coop_envs.make(env_id, **env_kwargs)
    start = time.perf_counter()
    try:
        result = evaluate(env, trainer.backend, cfg, problems)
    finally:
        trainer.backend.generate = generate
    return time.perf_counter() - start, result, replies


def same_replies(first: dict[str, list[str]], second: dict[str, list[str]]) -> float:
    """Share of prompts (observations) answered with the same text in both runs."""
    shared = set(first) & set(second)
    return sum(first[o] == second[o] for o in shared) / max(len(shared), 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=43,
                        help="coop_basics-v1 problems (43 = all of its test split; 0: skip these runs)")
    parser.add_argument("--large", type=int, default=300, help="coop_procedural-v0 problems of the large run (0: skip)")
    parser.add_argument("--skip-per-problem", action="store_true", help="skip the one-problem-at-a-time run")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.perf.eval_speed " + " ".join(sys.argv[1:] if argv is None else argv)
    trainer = make_trainer()
    try:
        timed_eval(trainer, "coop_basics-v1", {"split": "test"}, 2)  # warm-up
        if args.problems:
            write(RESULTS, basics_report(command, *basics_runs(trainer, args.problems, args.skip_per_problem)))
        if args.large:
            started = uptime()
            large = timed_eval(trainer, "coop_procedural-v0", {"split": "test", "level": [1, 2, 3]}, args.large)
            write(RESULTS_LARGE, large_report(command, (started, uptime()), large))
    finally:
        trainer.close()
    return 0


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    print(text)


def basics_runs(trainer, problems: int, skip_per_problem: bool):
    """The coop_basics-v1 runs: ((uptime at start, at end), rows, agreement, speed-up)."""
    started = uptime()
    basics = ("coop_basics-v1", {"split": "test"})
    with previous_settings(trainer.backend):
        before_s, before, before_replies = timed_eval(trainer, *basics, problems)
    after_s, after, after_replies = timed_eval(trainer, *basics, problems)
    rows = [("previous settings (one padded prefill, 64 rows a batch)", before_s, before),
            ("current settings (length-ordered prefill, 128 rows a batch)", after_s, after)]
    agreement = {"previous vs current settings": same_replies(before_replies, after_replies)}
    if not skip_per_problem:
        single_s, single, single_replies = timed_eval(trainer, *basics, problems, mode="per_problem")
        rows.append(("one problem at a time (eval_mode=per_problem)", single_s, single))
        agreement["batched vs one problem at a time"] = same_replies(after_replies, single_replies)
    return (started, uptime()), rows, agreement, before_s / after_s


def _header(title: str, command: str, uptimes: tuple[str, str]) -> list[str]:
    import torch

    return [
        f"# {title}", "",
        f"Command: `{command}`", "",
        f"torch {torch.__version__}, {torch.get_num_threads()} threads. `uptime` at start: `{uptimes[0]}`; at end: `{uptimes[1]}`.", "",
        "Untrained default pair (SmolLM2-135M-Instruct, LoRA at init, fp32), greedy, at most 128 new tokens, "
        "replies end at their closing code fence; one process, one model, one run.", "",
    ]


def basics_report(command, uptimes, rows, agreement, speedup) -> str:
    lines = _header("Held-out evaluation: time", command, uptimes)
    lines += ["| coop_basics-v1, test split | problems | seconds | pass rate |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {result.problems} | {seconds:.1f} | {result.pass_rate:.3f} |" for name, seconds, result in rows]
    lines += ["", f"Speed-up of the current settings over the previous: **{speedup:.2f}×**.", "",
              "| same replies | share of prompts |", "|---|---:|"]
    lines += [f"| {name} | {100 * share:.1f} % |" for name, share in agreement.items()]
    return "\n".join(lines) + "\n"


def large_report(command, uptimes, large) -> str:
    seconds, result, _ = large
    lines = _header("Held-out evaluation of many problems: time", command, uptimes)
    lines += [f"coop_procedural-v0, test split, levels 1-3: **{result.problems} problems in {seconds / 60:.1f} "
              f"minutes** ({seconds:.0f} s; pass rate {result.pass_rate:.3f}), batched, current settings, after one "
              "warm-up evaluation of 2 coop_basics-v1 problems."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
