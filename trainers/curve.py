"""The training-curve picture of a run, drawn from its ``metrics.jsonl`` at the end of ``llm-coop train``.

Left: per training step, the mean reward of the step's samples and, when the env reports one, its
``tests`` component (the share of hidden tests passed, on the reward's scale). Right: the held-out
pass rate (and acc) at each evaluation, step 0 being the untrained agents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainers.metrics_log import METRICS_FILE

PICTURE_FILE = "training.png"


def metric_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The rows of the run's ``metrics.jsonl`` (an empty list when there is none)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plot_run(run_dir: Path) -> Path | None:
    """Write ``<run_dir>/training.png`` and return its path; None when the run logged no step or
    matplotlib is not installed (it comes with the ``train`` extra)."""
    rows = metric_rows(run_dir)
    train = [row for row in rows if _number(row.get("reward/mean")) is not None]
    evals = [row for row in rows if _number(row.get("eval/pass_rate")) is not None]
    if not train and not evals:
        return None
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    left, right = axes
    _plot_series(left, train, (("reward/mean", "mean reward"), ("reward/tests", "tests component")), ".")
    left.set_title("training samples, per step", fontsize=10)
    left.set_xlabel("training step")
    if train:
        left.legend(fontsize=8)
    _plot_series(right, evals, (("eval/pass_rate", "pass rate"),
                                ("eval/tests_passed", "acc (share of tests passed)")), "o")
    right.set_title("held-out problems, greedy", fontsize=10)
    right.set_xlabel("training step")
    right.set_ylim(0, 1)
    if evals:
        right.legend(fontsize=8)
    figure.tight_layout()
    path = Path(run_dir) / PICTURE_FILE
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _plot_series(axis, rows: list[dict], series, marker: str) -> None:
    """One line per (metric key, label) on `axis`, over the rows that hold a number for it."""
    for key, name in series:
        points = [(row["step"], _number(row.get(key))) for row in rows]
        points = [(step, value) for step, value in points if value is not None]
        if points:
            axis.plot([s for s, _ in points], [v for _, v in points], marker=marker, label=name)
