"""``python -m benchmarks.perf.top_p_cost``: what nucleus (top-p) filtering costs, full sort against candidates.

Sampling at top-p < 1 and scoring under that distribution (:mod:`llm_coop_envs.lm.distribution`)
must find, at every position, the least likely tokens holding 1 − top-p of the mass. A sort of the
whole vocabulary does it; :func:`~llm_coop_envs.lm.distribution.outside_nucleus` first looks at the
most likely :data:`~llm_coop_envs.lm.distribution.NUCLEUS_CANDIDATES` tokens and sorts only the
rows they do not cover. Side by side in one process:

* the filter alone on a loss micro-batch (8 rows x 128 positions) and on a decode step (32 rows) of
  SmolLM2's vocabulary, with logits of the default model's own replies' spread (random here, scaled);
* one MAGRPO training step of the ``problems_per_step`` benchmark's trainer at P = 4, temperature 0.6,
  top-p 0.6 (the learning benchmark's sampling), with each filter, interleaved after a warm-up each.

Results: ``benchmarks/results/top_p_cost.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.perf.problems_per_step import make_trainer, timed_step
from benchmarks.perf.trainer_step import spread, uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "top_p_cost.md"
VOCAB = 49152
TOP_P = 0.6


def full_sort(scores, top_p, keep=None):
    """The filter before candidates: a sort of the whole vocabulary at every position."""
    from llm_coop_envs.lm import distribution

    drop = distribution._outside_nucleus_sorted(scores, top_p)
    return drop if keep is None else drop.scatter(-1, keep.unsqueeze(-1), False)


@contextlib.contextmanager
def filter_in_use(name: str) -> Iterator[None]:
    from llm_coop_envs.lm import distribution

    saved = distribution.outside_nucleus
    distribution.outside_nucleus = {"full sort": full_sort, "candidates": saved}[name]
    try:
        yield
    finally:
        distribution.outside_nucleus = saved


def filter_ms(method: Callable, shape: tuple[int, ...], repeats: int = 5) -> float:
    """Median milliseconds of ``method`` on logits of ``shape`` (scaled like a small model's at temperature 0.6)."""
    import torch

    scores = torch.randn(*shape, VOCAB, generator=torch.Generator().manual_seed(0)) * 4.0
    method(scores, TOP_P)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        method(scores, TOP_P)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def report(command, uptimes, filters, steps) -> str:
    import torch

    lines = [
        "# Nucleus (top-p) filtering: full sort against candidates", "",
        f"Command: `{command}`", "",
        f"torch {torch.__version__}, {torch.get_num_threads()} threads. `uptime` at start: `{uptimes[0]}`; "
        f"at end: `{uptimes[1]}`.", "",
        f"The filter alone, top-p {TOP_P}, vocabulary {VOCAB} (median of 5):", "",
        "| logits | full sort | candidates | speed-up |", "|---|---:|---:|---:|",
    ]
    for name, (before, after) in filters.items():
        lines.append(f"| {name} | {before:.1f} ms | {after:.1f} ms | {before / after:.1f}x |")
    lines += ["", "One MAGRPO step (SmolLM2-135M-Instruct fp32, LoRA r=8, 2 agents, G=4, P=4 problems, exactly 128 new "
              f"tokens per reply, temperature 0.6, top-p {TOP_P}, micro-batch 8), interleaved, one warm-up step each:", "",
              "| filter | step | generation | update | step speed-up |", "|---|---:|---:|---:|---:|"]
    base = steps["full sort"]
    for name, rows in steps.items():
        ratio = [b["step_s"] / r["step_s"] for r, b in zip(rows, base)]
        lines.append(f"| {name} | {statistics.median(r['step_s'] for r in rows):.1f} s "
                     f"| {statistics.median(r['generation_s'] for r in rows):.1f} s "
                     f"| {statistics.median(r['update_s'] for r in rows):.1f} s | {spread(ratio)} |")
    lines += ["", f"{len(base)} repeats per filter. The two filters drop the same tokens "
              "(`tests/trainers/test_nucleus.py`); the benchmark's problems-per-step and trainer-step "
              "comparisons sample at top-p 1.0 and do not filter at all."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="timed training steps per filter")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.perf.top_p_cost " + " ".join(sys.argv[1:] if argv is None else argv)
    from llm_coop_envs.lm import distribution

    started = uptime()
    filters = {f"loss micro-batch, 8 x 128 x {VOCAB}": (8, 128), f"decode step, 32 x {VOCAB}": (32,)}
    filters = {name: (filter_ms(full_sort, shape), filter_ms(distribution.outside_nucleus, shape))
               for name, shape in filters.items()}
    trainer = make_trainer(128, tempfile.mkdtemp(prefix="llm-coop-bench-"), temperature=0.6, top_p=TOP_P)
    steps: dict[str, list[dict]] = {"full sort": [], "candidates": []}
    try:
        for name in steps:
            with filter_in_use(name):
                timed_step(trainer, 4)  # warm-up
        for _ in range(args.repeats):
            for name in steps:
                with filter_in_use(name):
                    steps[name].append(timed_step(trainer, 4))
                print(name, steps[name][-1], flush=True)
    finally:
        trainer.close()
    text = report(command, (started, uptime()), filters, steps)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
