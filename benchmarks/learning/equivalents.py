"""Algorithms that are one algorithm at a bench's settings are shown as one row.

MARLOO's leave-one-out advantage is G/(G−1) times MAGRPO's group-mean advantage when the group size G
is fixed, the reward is joint and MAGRPO does not divide by the standard deviation: a constant factor,
which AdamW's per-parameter scaling and the gradient clip cancel. On the procedural leaderboard the two
trained to the same reply on 354 of 360 held-out problems. A bench always has one group size, so unless
its overrides change one of those conditions (:data:`BREAKING_OVERRIDES`), the report shows MARLOO as MAGRPO's row (its runs stay in
the records and in the budget, runs and signal tables) and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SAME_AS = {"marloo": "magrpo"}
"""Algorithm -> the algorithm it equals at a fixed group size."""
BREAKING_OVERRIDES = ("normalize_std", "reward_mode", "own_returns")
"""Settings under which the two differ (a std division, per-agent returns): a bench whose overrides
name one anywhere (``algo_kwargs={normalize_std: true}``, ``env_kwargs.reward_mode=...``) keeps both rows."""


def merged_algorithms(meta: Mapping[str, Any], algorithms: Mapping[str, Any]) -> dict[str, str]:
    """The algorithms this bench shows as another's row: ``{"marloo": "magrpo"}`` or nothing."""
    overrides = " ".join(str(o) for o in meta.get("overrides", []))
    if any(name in overrides for name in BREAKING_OVERRIDES):
        return {}
    return {algo: same for algo, same in SAME_AS.items() if algo in algorithms and same in algorithms}


def shown_summary(meta: Mapping[str, Any], summary: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The summary without the merged algorithms' rows and comparisons, and the sentence saying why."""
    merged = merged_algorithms(meta, summary["algorithms"])
    if not merged:
        return dict(summary), ""
    algorithms = {algo: result for algo, result in summary["algorithms"].items() if algo not in merged}
    comparisons = {name: result for name, result in summary["comparisons"].items()
                   if not set(name.split(" - ")) & set(merged)}
    notes = [f"{_name(algo)} has no row of its own: at this bench's fixed group size G its advantage is "
             f"G/(G−1) times {_name(same)}'s, a constant factor that AdamW and the gradient clip cancel, so "
             f"{_name(same)}'s row stands for both (its runs, {_seeds(summary, algo)}, are in `records/` and "
             f"in the budget, runs and training-signal tables below)" for algo, same in merged.items()]
    return {**summary, "algorithms": algorithms, "comparisons": comparisons}, ". ".join(notes) + "."


def _name(algo: str) -> str:
    from benchmarks.learning.report import label

    return label(algo).split(" (")[0]


def _seeds(summary: Mapping[str, Any], algo: str) -> str:
    seeds = summary["algorithms"][algo].get("seeds", [])
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(str(seed) for seed in seeds)
