"""PNG plots with matplotlib's Agg backend (no display needed): pass@k bars and learning curves."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pass_at_k(methods: Mapping[str, Mapping[str, Any]], path: str | Path, title: str = "") -> Path | None:
    """Grouped bars: one group per k, one bar per method; None when no method has pass@k."""
    ks = list(dict.fromkeys(k for s in methods.values() for k, v in s.get("pass_at_k", {}).items() if v is not None))
    if not ks:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(max(5, 1.4 * len(ks) * max(1, len(methods)) / 2), 3.6))
    width = 0.8 / len(methods)
    for position, (label, summary) in enumerate(methods.items()):
        values = [100 * (summary.get("pass_at_k", {}).get(k) or 0.0) for k in ks]
        xs = [i + (position - (len(methods) - 1) / 2) * width for i in range(len(ks))]
        bars = axes.bar(xs, values, width, label=label)
        axes.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    axes.set_xticks(range(len(ks)), [f"pass@{k}" for k in ks])
    axes.set_ylabel("%")
    axes.set_ylim(0, max(5.0, min(100.0, _top(methods, ks) * 1.25)))
    axes.set_title(title or "pass@k")
    axes.legend(fontsize=8, ncols=min(len(methods), 3))
    return _save(figure, plt, path)


def _top(methods: Mapping[str, Mapping[str, Any]], ks: Sequence[str]) -> float:
    return max(100 * (s.get("pass_at_k", {}).get(k) or 0.0) for s in methods.values() for k in ks)


def read_metrics_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """A trainer's ``metrics.jsonl``: one JSON object per line (bad lines are skipped)."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def plot_learning_curves(
    runs: Mapping[str, Sequence[Mapping[str, Any]]],
    path: str | Path,
    keys: Sequence[str] = ("reward/mean",),
    step_key: str = "step",
    smooth: int = 1,
) -> Path | None:
    """One panel per metric key, one line per run (label → metric rows); a moving average of ``smooth`` points."""
    panels = [k for k in keys if any(_series(rows, k, step_key)[0] for rows in runs.values())]
    if not panels:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for axis, key in zip(axes[0], panels):
        for label, rows in runs.items():
            steps, values = _series(rows, key, step_key)
            if steps:
                axis.plot(steps, _moving_average(values, smooth), label=label)
        axis.set_title(key)
        axis.set_xlabel(step_key)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    return _save(figure, plt, path)


def _series(rows: Sequence[Mapping[str, Any]], key: str, step_key: str) -> tuple[list[float], list[float]]:
    points = [
        (row.get(step_key, i), row[key])
        for i, row in enumerate(rows)
        if isinstance(row.get(key), (int, float)) and math.isfinite(row[key])
    ]
    return [p[0] for p in points], [float(p[1]) for p in points]


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    window = max(1, window)
    return [sum(values[max(0, i - window + 1) : i + 1]) / (i + 1 - max(0, i - window + 1)) for i in range(len(values))]


def _save(figure, plt, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
