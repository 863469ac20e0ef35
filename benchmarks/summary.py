"""From episodes to one row of numbers per method: what the tables, JSON and plots show.

pass@k counts an episode as correct when the env says ``solved`` (coding: every test passed);
accuracy@k uses the fraction of tests passed. Both need n ≥ k samples per problem. The cooperation
rate is over all joint replies; the scheme shares are over the solved ones (as in the papers).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import mean
from typing import Any

from benchmarks.metrics.cooperation import scheme_distribution
from benchmarks.metrics.pass_at_k import mean_accuracy_at_k, mean_pass_at_k
from benchmarks.records import EpisodeRecord


def summarize(records: Sequence[EpisodeRecord], ks: Iterable[int], wall_s: float | None = None) -> dict[str, Any]:
    """The metrics of one method's episodes (all problems × samples)."""
    ks = tuple(ks)
    by_problem: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by_problem[record.task_id].append(record)
    groups = list(by_problem.values())
    summary: dict[str, Any] = {
        "problems": len(groups),
        "samples_per_problem": min((len(g) for g in groups), default=0),
        "episodes": len(records),
        "pass_at_k": _keyed(mean_pass_at_k([(len(g), sum(r.solved for r in g)) for g in groups], ks)),
        "solved_rate": _mean(r.solved for r in records),
        "reward": _mean(r.reward for r in records),
        "components": _mean_dicts(r.components for r in records),
        "errors": sum(bool(r.error) for r in records),
    }
    if groups:
        summary["intervals"] = problem_intervals(groups)
    fractions = [[r.test_fraction for r in g] for g in groups]
    if records and all(f is not None for g in fractions for f in g):
        summary["accuracy_at_k"] = _keyed(mean_accuracy_at_k(fractions, ks))
        summary["test_pass_fraction"] = _mean(f for g in fractions for f in g)
    if any(r.cooperates is not None for r in records):
        summary["cooperation_rate"] = _mean(bool(r.cooperates) for r in records)
        solved = [r.scheme or "none" for r in records if r.solved]
        summary["schemes_of_solved"] = scheme_distribution(solved) if solved else {}
    if any(r.helper_needed is not None for r in records):
        summary["helper_dependent_rate"] = _mean(bool(r.helper_needed) for r in records)
    if any(r.writing for r in records):
        summary["writing"] = _mean_dicts(r.writing for r in records)
    summary["efficiency"] = {
        "tokens_per_episode": _mean(r.tokens for r in records),
        "critical_path_tokens_per_episode": _mean(r.critical_tokens for r in records),
        "generation_latency_s_per_episode": _mean(r.latency_s for r in records),
        "wall_s_per_episode": (wall_s / len(records)) if wall_s is not None and records else None,
    }
    return summary


INTERVAL_RESAMPLES = 2_000


def problem_intervals(groups: Sequence[Sequence[EpisodeRecord]]) -> dict[str, dict[str, float]]:
    """95 % bootstrap intervals over problems (each problem's mean over its samples) of the solved rate
    and the mean reward: the table's error bars, so that two rows are not read as different by noise."""
    import numpy as np

    from benchmarks.learning.bootstrap import interval

    per_problem = {
        "solved_rate": [mean(float(r.solved) for r in g) for g in groups],
        "reward": [mean(float(r.reward) for r in g) for g in groups],
    }
    return {name: interval(np.array([values]), INTERVAL_RESAMPLES).as_dict() for name, values in per_problem.items()}


def _keyed(values: dict[int, float | None]) -> dict[str, float | None]:
    return {str(k): v for k, v in values.items()}  # JSON object keys are strings


def _mean(values: Iterable[float]) -> float | None:
    values = [float(v) for v in values]
    return mean(values) if values else None


def _mean_dicts(dicts: Iterable[dict[str, float]]) -> dict[str, float]:
    dicts = list(dicts)
    keys = dict.fromkeys(k for d in dicts for k in d)
    return {k: mean(d.get(k, 0.0) for d in dicts) for k in keys}
