"""``python -m benchmarks.perf.update_profile``: how close the update runs to the machine's matrix speed.

The update (the loss's forward and backward over every reply, one optimizer step per agent) grows with
the replies while generation per reply shrinks with more problems per step
(:mod:`benchmarks.perf.problems_per_step`), so at P = 4 the update bounds learning throughput. This
times the update of one MAGRPO step of that benchmark's trainer (P problems, 2 agents, G = 4,
``--tokens`` new tokens, fp32, LoRA r = 8) as it runs, counts its floating-point operations under
``torch.profiler`` on a second, identical step, and sets both against a plain fp32 matrix product of
the model's MLP shape timed in the same process, same threads: how long the update's matrix products
would take at the speed this machine multiplies matrices at all, against how long the update takes.
Near 100 %, a faster update needs fewer operations (shorter prompts or replies, fewer rows); well
below, time goes to the products running slower than they could and to the operators around them.
Results: ``benchmarks/results/update_profile.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.perf.problems_per_step import make_trainer, timed_step
from benchmarks.perf.trainer_step import uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "update_profile.md"
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm")
"""The operators that do the model's matrix products (``linear`` and ``matmul`` call these)."""


def reference_gflops(rows: int = 1024, hidden: int = 576, inner: int = 1536, repeats: int = 20) -> float:
    """fp32 GFLOP/s of ``[rows, hidden] @ [hidden, inner]`` (SmolLM2-135M's MLP shape), best of ``repeats``."""
    import torch

    a, b = torch.randn(rows, hidden), torch.randn(hidden, inner)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * rows * hidden * inner / best / 1e9


def profiled_update(trainer, problems: int):
    """One step with ``problems`` problems, its update under the profiler: (step timings, profiler events)."""
    from torch.profiler import ProfilerActivity, profile

    update = trainer.update
    captured = {}

    def profiled(items):
        with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
            result = update(items)
        captured["events"] = prof.key_averages()
        return result

    trainer.update = profiled
    try:
        timings = timed_step(trainer, problems)
    finally:
        trainer.update = update
    return timings, captured["events"]


def summarise(events) -> dict[str, float]:
    """Self CPU seconds of the matrix products and of everything, and the products' FLOPs."""
    self_s = defaultdict(float)
    flops = 0.0
    for event in events:
        kind = "matmul" if event.key in MATMUL_OPS else "other"
        self_s[kind] += event.self_cpu_time_total / 1e6
        if kind == "matmul":
            flops += event.flops or 0
    total = self_s["matmul"] + self_s["other"]
    return {"matmul_s": self_s["matmul"], "total_s": total, "matmul_share": self_s["matmul"] / total if total else 0.0,
            "matmul_gflops": flops / self_s["matmul"] / 1e9 if self_s["matmul"] else 0.0, "gflop": flops / 1e9}


def report(command: str, uptimes: tuple[str, str], problems: int, tokens: int, plain: dict, profiled: dict,
           summary: dict, peak: float) -> str:
    import torch

    at_peak = summary["gflop"] / peak
    return "\n".join([
        "# The update against the machine's matrix speed", "",
        f"Command: `{command}`", "",
        f"torch {torch.__version__}, {torch.get_num_threads()} threads. `uptime` at start: `{uptimes[0]}`; "
        f"at end: `{uptimes[1]}`.", "",
        f"Settings: the `problems_per_step` benchmark's trainer (MAGRPO, SmolLM2-135M-Instruct fp32, LoRA r=8, "
        f"2 agents, G=4, exactly {tokens} new tokens per reply, micro-batch 8), P = {problems}; one warm-up step, "
        "one step timed as it runs, then one step whose update runs under `torch.profiler` with FLOP counting "
        "(every step does the same work: the same rows, the same lengths).", "",
        "| | seconds | GFLOP | GFLOP/s |",
        "|---|---:|---:|---:|",
        f"| update as it runs (wall) | {plain['update_s']:.1f} | {summary['gflop']:.0f} | "
        f"{summary['gflop'] / plain['update_s']:.0f} |",
        f"| update under the profiler (wall; the profiler's own cost included) | {profiled['update_s']:.1f} | | |",
        f"| its matrix products (`mm`, `addmm`, `bmm`; self time) | {summary['matmul_s']:.1f} | {summary['gflop']:.0f} | "
        f"{summary['matmul_gflops']:.0f} |",
        f"| every other operator (self time) | {summary['total_s'] - summary['matmul_s']:.1f} | | |",
        f"| reference: one fp32 product of the MLP's shape, best of 20 | | | {peak:.0f} |", "",
        f"At the reference speed the update's matrix products would take **{at_peak:.1f} s**, "
        f"{at_peak / plain['update_s']:.0%} of the update as it runs ({plain['update_s']:.1f} s, "
        f"{plain['update_s'] / plain['joint_samples']:.2f} s per joint sample): the rest is the products "
        "running below that speed and the operators around them (under the profiler, "
        f"{1 - summary['matmul_share']:.0%} of the operator time is outside the products; the profiler "
        "inflates many small operators more than a few large ones, so that share is an upper bound).", "",
    ]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per reply")
    parser.add_argument("--problems", type=int, default=4, help="problems per step")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.perf.update_profile " + " ".join(sys.argv[1:] if argv is None else argv)
    started = uptime()
    trainer = make_trainer(args.tokens, tempfile.mkdtemp(prefix="llm-coop-bench-"))
    try:
        timed_step(trainer, args.problems)  # warm-up
        plain = timed_step(trainer, args.problems)
        timings, events = profiled_update(trainer, args.problems)
        peak = reference_gflops()
    finally:
        trainer.close()
    text = report(command, (started, uptime()), args.problems, args.tokens, plain, timings, summarise(events), peak)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
