"""The minimum detectable change of a planned benchmark, from its untrained records alone.

A benchmark's primary endpoint is a paired change: each seed's trained team against the untrained
team, on the same held-out problems. How small a change it can see depends on how many problems
and seeds it has, and on how much training moves problems **without** a net gain (a trained policy
solves some problems the untrained one failed and fails some it solved). The untrained records fix
the first part; the second is an assumption, stated as the **churn** ``c``: the share of problems
whose outcome a trained seed redraws at random from the untrained outcomes of all problems (so the
expected change is zero). Two cases bracket the truth: every seed churns its own problems
(``independent``), or the same problems churn in every seed (``shared``: the fragile problems are
the same whatever the seed, which makes seeds agree and the interval wider).

For each case the null experiment is simulated, its paired change is bootstrapped exactly as the
report does (:mod:`benchmarks.learning.bootstrap`: problems drawn once per resample, shared by every
seed), and the minimum detectable change at a two-sided 5 % level and 80 % power is
``(z_0.975 + z_0.8) x SE``, SE being the bootstrap's standard error averaged over the simulations.

    python -m benchmarks.learning.mdc RECORDS.jsonl --seeds 3
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.learning import bootstrap
from benchmarks.learning.records import METRICS

Z_SUM = 1.959964 + 0.841621
"""z of a two-sided 5 % test plus z of 80 % power."""
CHURNS = (0.1, 0.2, 0.3, 0.5)
SIMULATIONS = 20
RESAMPLES = 2000


def untrained_values(records: Sequence[dict], metric: str) -> np.ndarray:
    """The untrained team's value of ``metric`` (``pass_rate``, ``acc``, ...) per problem."""
    values = [record.get(METRICS[metric]) for record in records]
    if any(value is None for value in values):
        raise ValueError(f"some records have no {METRICS[metric]!r}: cannot plan on {metric}")
    return np.array([float(value) for value in values])


def null_trained(untrained: np.ndarray, seeds: int, churn: float, shared: bool, rng: np.random.Generator) -> np.ndarray:
    """Seeds x problems trained values with no net gain: a share ``churn`` of problems redrawn from the
    untrained values of all problems (the same problems in every seed when ``shared``)."""
    problems = len(untrained)
    churned = rng.random((1 if shared else seeds, problems)) < churn
    churned = np.broadcast_to(churned, (seeds, problems))
    redrawn = untrained[rng.integers(0, problems, (seeds, problems))]
    return np.where(churned, redrawn, untrained[None, :])


def standard_error(untrained: np.ndarray, seeds: int, churn: float, shared: bool, seed: int = 0) -> float:
    """The bootstrap standard error of the paired change (trained - untrained) under the null, averaged
    over :data:`SIMULATIONS` simulated benchmarks."""
    rng = np.random.default_rng(seed)
    errors = []
    for _ in range(SIMULATIONS):
        change = null_trained(untrained, seeds, churn, shared, rng) - untrained[None, :]
        draws = bootstrap.draw(seeds, len(untrained), RESAMPLES, rng)
        errors.append(float(np.std(bootstrap.resampled_means(change, draws))))
    return float(np.mean(errors))


def mdc_table(records: Sequence[dict], seeds: int, metrics: Sequence[str] = ("pass_rate", "acc"),
              churns: Sequence[float] = CHURNS) -> list[dict]:
    """One row per (metric, churn, case): the untrained mean, the SE and the minimum detectable change."""
    rows = []
    for metric in metrics:
        untrained = untrained_values(records, metric)
        for churn in churns:
            for shared in (False, True):
                error = standard_error(untrained, seeds, churn, shared)
                rows.append({"metric": metric, "problems": len(untrained), "seeds": seeds, "untrained": float(untrained.mean()),
                             "churn": churn, "case": "shared" if shared else "independent",
                             "se": error, "mdc": Z_SUM * error})
    return rows


def markdown(rows: Sequence[dict]) -> str:
    lines = ["| metric | problems | seeds | untrained | churn | churned problems | SE of the change | minimum detectable change |",
             "|---|---:|---:|---:|---:|---|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['metric']} | {row['problems']} | {row['seeds']} | {100 * row['untrained']:.1f} % | "
                     f"{row['churn']:.0%} | {row['case']} | {100 * row['se']:.2f} pts | **{100 * row['mdc']:.1f} pts** |")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning.mdc", description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="the untrained team's records (one JSON object per problem)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--churn", type=float, nargs="+", default=list(CHURNS))
    args = parser.parse_args(list(argv))
    records = [json.loads(line) for line in args.records.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(markdown(mdc_table(records, args.seeds, churns=args.churn)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
