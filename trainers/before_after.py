"""The before/after table of a training run: held-out pass rate, acc, the helper-dependent solve rate
(solved, and the counterfactual check finds that main needs the helper), helper-call rate and reward,
each change with its 95 % paired bootstrap interval, and a plain sentence when it is within noise.

Both evaluations score the same problems greedily, so the interval resamples problems once and takes
the change on each draw (a paired bootstrap): the problem-to-problem spread both share cancels. It
says nothing about seeds: one run is one seed (``llm-coop bench`` runs several).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

RESAMPLES = 4000
METRICS = (  # (record field, label, shown as a share of problems)
    ("solved", "pass rate", True),
    ("tests_passed", "acc (share of tests passed)", True),
    ("helper_needed", "solved needing the helper", True),
    ("calls_helper", "main calls the helper", True),
    ("reward", "mean reward", False),
)


def eval_records(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The first and the last held-out evaluation's per-problem records of a run (None: fewer than two)."""
    files = sorted((Path(run_dir) / "eval").glob("step_*.jsonl"))
    if len(files) < 2:
        return None
    read = [[json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            for path in (files[0], files[-1])]
    return read[0], read[1]


def paired_change(before: Sequence[float], after: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``after - before`` with its 95 % bootstrap interval over problems."""
    difference = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(difference), (RESAMPLES, len(difference)))
    means = difference[draws].mean(axis=1)
    return float(difference.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def before_after_report(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """The table and the sentence saying which changes are outside noise."""
    after_by_id = {record["task_id"]: record for record in after}
    pairs = [(record, after_by_id[record["task_id"]]) for record in before if record["task_id"] in after_by_id]
    lines = [f"Held-out problems: {len(pairs)} (greedy, the same problems before and after).", "",
             "| metric | before | after | change [95 % interval] |", "|---|---:|---:|---:|"]
    outside = []
    for field, label, share in METRICS:
        known = [(b[field], a[field]) for b, a in pairs if b.get(field) is not None and a.get(field) is not None]
        if not known:
            continue
        b_values, a_values = zip(*known)
        change, low, high = paired_change([float(v) for v in b_values], [float(v) for v in a_values])
        scale, unit = (100, " pts") if share else (1, "")
        lines.append(f"| {label} | {_value(b_values, share)} | {_value(a_values, share)} | "
                     f"{change * scale:+.1f}{unit} [{low * scale:+.1f}, {high * scale:+.1f}] |")
        if low > 0 or high < 0:
            outside.append(f"{label} ({'up' if change > 0 else 'down'})")
    lines.append("")
    lines.append(("Outside noise (the interval excludes 0): " + ", ".join(outside) + ".") if outside else
                 "Every change is within noise: its 95 % interval includes 0, so this run shows no "
                 "measurable change (one seed, a short run; `llm-coop bench` measures learning).")
    return "\n".join(lines)


def _value(values: Sequence[Any], share: bool) -> str:
    mean = float(np.mean([float(v) for v in values]))
    if share and all(isinstance(v, bool) for v in values):
        return f"{sum(values)}/{len(values)} ({mean:.0%})"
    return f"{mean:.1%}" if share else f"{mean:.3f}"
