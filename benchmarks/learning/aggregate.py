"""From finished runs to the numbers of the report: per algorithm, before (step 0) and after (last
evaluation) with 95 % intervals, the paired change, and the first algorithm against each other one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.learning import bootstrap
from benchmarks.learning.records import METRICS, Run, measured_budget, problem_values, training_curve, training_signal

# The pass rate and the share of tests passed mean the same on every team; rewards do not
# (the pair's maximum is 4.0, a single agent's 2.1), nor does a helper rate, so only these compare.
COMPARABLE = ("pass_rate", "acc")
CURVED = (*COMPARABLE, "reward")  # a team's reward is comparable with itself across steps


def common_task_ids(runs: Sequence[Run]) -> list[str]:
    """Problems every evaluation of every run has, in the first evaluation's order."""
    evaluations = [records for run in runs for records in run.evals.values()]
    if not evaluations:
        return []
    shared = set.intersection(*({r["task_id"] for r in records} for records in evaluations))
    return [r["task_id"] for r in evaluations[0] if r["task_id"] in shared]


def matrix(runs: Sequence[Run], step: int | str, metric: str, task_ids: list[str]) -> np.ndarray | None:
    """Seeds x problems values of ``metric`` at ``step`` (an int, ``"before"`` or ``"after"``);
    ``None`` when a run lacks that evaluation or metric."""
    rows = []
    for run in runs:
        at = {"before": min(run.evals), "after": max(run.evals)}.get(step, step) if run.evals else None
        values = problem_values(run.evals[at], metric, task_ids) if at in run.evals else None
        if values is None:
            return None
        rows.append(values)
    return np.array(rows) if rows else None


def summarise_algorithm(runs: Sequence[Run], task_ids: list[str], resamples: int) -> dict[str, Any]:
    """Before/after/change per metric (``None`` where the runs lack it), curves and measured budgets."""
    metrics = {}
    for metric in METRICS:
        before, after = matrix(runs, "before", metric, task_ids), matrix(runs, "after", metric, task_ids)
        if before is None or after is None:
            metrics[metric] = None
            continue
        metrics[metric] = {
            "before": bootstrap.interval(before, resamples).as_dict(),
            "after": bootstrap.interval(after, resamples).as_dict(),
            "change": bootstrap.paired_difference(after, before, resamples).as_dict(),
        }
    families = per_family(runs, task_ids)
    return {
        "seeds": [run.seed for run in runs],
        "metrics": metrics,
        "churn": churn(runs, task_ids),
        "components": component_changes(runs, task_ids, resamples),
        **({"families": families} if families else {}),  # absent, not null: older records recompute as written
        "curves": curves(runs, task_ids, resamples),
        "budget": [{"seed": run.seed, **measured_budget(run), "wall_s": run.wall_s} for run in runs],
    }


FAMILY_METRICS = ("pass_rate", "helper_dependent_rate", "helper_call_rate")


def family_of(task_id: str) -> str | None:
    """The family of a generated problem (``coop_procedural/<family>/L<level>/<hash>``); None for
    datasets whose ids name no family."""
    parts = task_id.split("/")
    return parts[1] if len(parts) == 4 and parts[2].startswith("L") else None


def per_family(runs: Sequence[Run], task_ids: list[str]) -> dict[str, dict[str, dict[str, float]]] | None:
    """Per family, before and after, the mean over seeds and the family's problems of the pass rate,
    the helper-dependent solve rate and the syntactic call rate; None when the problems name no family
    or the records lack the helper-dependent field (benches before it was recorded)."""
    families = [family_of(task_id) for task_id in task_ids]
    if not task_ids or None in families:
        return None
    table: dict[str, dict[str, dict[str, float]]] = {}
    for step in ("before", "after"):
        for metric in FAMILY_METRICS:
            values = matrix(runs, step, metric, task_ids)
            if values is None:
                return None
            for family in sorted(set(families)):
                columns = [i for i, f in enumerate(families) if f == family]
                table.setdefault(family, {}).setdefault(step, {})[metric] = float(values[:, columns].mean())
    return table


def churn(runs: Sequence[Run], task_ids: list[str]) -> dict[str, float] | None:
    """How many problems training moved, mean over seeds: the share solved after but not before
    (gained), before but not after (lost), and both together (changed). A net change near zero with a
    large churn is movement, not learning; it is also what a plan's minimum detectable change assumes."""
    before, after = matrix(runs, "before", "pass_rate", task_ids), matrix(runs, "after", "pass_rate", task_ids)
    if before is None or after is None or not task_ids:
        return None
    gained = float(((after == 1) & (before == 0)).mean())
    lost = float(((after == 0) & (before == 1)).mean())
    return {"gained": gained, "lost": lost, "changed": gained + lost}


def component_values(run: Run, step: int | str, name: str, task_ids: list[str]) -> list[float] | None:
    """Reward component ``name`` per problem at ``step`` (``None`` when a record lacks components)."""
    at = {"before": min(run.evals), "after": max(run.evals)}.get(step, step) if run.evals else None
    by_task = {r["task_id"]: r.get("components") for r in run.evals.get(at, [])}
    if any(not isinstance(by_task.get(task), dict) for task in task_ids):
        return None
    return [float(by_task[task].get(name, 0.0)) for task in task_ids]


def component_changes(runs: Sequence[Run], task_ids: list[str], resamples: int) -> dict[str, Any]:
    """``after - before`` of each reward component (paired), so a reward change splits into what moved
    it (formatting components vs tests vs cooperation); empty when the records carry no components."""
    names = sorted({name for run in runs for records in run.evals.values() for r in records
                    for name in (r.get("components") or {})})
    result = {}
    for name in names:
        before = [component_values(run, "before", name, task_ids) for run in runs]
        after = [component_values(run, "after", name, task_ids) for run in runs]
        if runs and task_ids and all(v is not None for v in before + after):
            result[name] = bootstrap.paired_difference(np.array(after), np.array(before), resamples).as_dict()
    return result


def curves(runs: Sequence[Run], task_ids: list[str], resamples: int) -> dict[str, list[dict[str, float]]]:
    """Per metric of :data:`CURVED`: one point per evaluation step that every run has."""
    steps = sorted(set.intersection(*(set(run.evals) for run in runs))) if runs else []
    result = {}
    for metric in CURVED:
        points = []
        for step in steps:
            values = matrix(runs, step, metric, task_ids)
            if values is not None:
                points.append({"step": step, **bootstrap.interval(values, resamples).as_dict()})
        result[metric] = points
    return result


def same_team(reference: Sequence[Run], other: Sequence[Run]) -> bool:
    """Whether both algorithms' runs field the same recorded team (two pairs, or two single agents)."""
    teams = {run.team for run in (*reference, *other)}
    return len(teams) == 1 and None not in teams


def compare(reference: Sequence[Run], other: Sequence[Run], task_ids: list[str], resamples: int) -> dict[str, Any]:
    """``reference - other`` after training, per comparable metric (``None`` where either lacks it):
    the rates for any two teams, every metric for two algorithms of the same team (rewards on one
    scale, a helper on both sides)."""
    result = {}
    for metric in METRICS if same_team(reference, other) else COMPARABLE:
        a, b = matrix(reference, "after", metric, task_ids), matrix(other, "after", metric, task_ids)
        result[metric] = None if a is None or b is None else bootstrap.difference(a, b, resamples).as_dict()
    return result


def aggregate(runs: Sequence[Run], algorithms: Sequence[str], resamples: int = bootstrap.RESAMPLES) -> dict[str, Any]:
    """Everything the report shows, from the runs that finished; failed/missing runs are listed."""
    done = [run for run in runs if run.ok]
    task_ids = common_task_ids(done)
    by_algo = {algo: [run for run in done if run.algo == algo] for algo in algorithms}
    summary = {algo: summarise_algorithm(group, task_ids, resamples) for algo, group in by_algo.items() if group}
    reference = algorithms[0]
    comparisons = {
        f"{reference} - {algo}": compare(by_algo[reference], by_algo[algo], task_ids, resamples)
        for algo in algorithms[1:] if by_algo[reference] and by_algo[algo]
    }
    return {
        "task_ids": task_ids,
        "algorithms": summary,
        "comparisons": comparisons,
        "runs": [{"name": r.name, "algo": r.algo, "seed": r.seed, "status": r.status, "error": r.error,
                  "wall_s": r.wall_s, "samples": r.samples, "signal": training_signal(r),
                  "training": training_curve(r)} for r in runs],
        "resamples": resamples,
    }
