"""The ``coop_procedural`` envs: pick the split's rows, hand them to the coding env factory.

``coop_procedural-v1`` is v0's generators under the ``v2`` scoring rules, keeping only draws that pass
the checks of :mod:`llm_coop_envs.coding.procedural.draw_checks`. ``coop_procedural-v2`` holds level 1
and the cooperative level (:mod:`.families.cooperative`), under the same rules and checks, with the
pair prompts of :mod:`llm_coop_envs.coding.pair_prompts`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llm_coop_envs.coding.factory import coding_env, warn_v1
from llm_coop_envs.coding.procedural.build import SUITE
from llm_coop_envs.coding.procedural.families import COOPERATIVE_LEVEL, HELDOUT_FAMILIES, LEVELS, TRAIN_FAMILIES
from llm_coop_envs.coding.procedural.generate import MAX_PER_CELL, TrainRows, fixed_rows, with_prompts
from llm_coop_envs.core.env import CoopEnv

NAME = "coop_procedural-v1"
NAME_V2 = "coop_procedural-v2"
SPLITS = ("train", "test", "heldout_families")
LEVELS_V2 = (1, COOPERATIVE_LEVEL)
"""v2's levels: v1's level 1 (nothing hidden) and the cooperative level."""
PROMPTS_V2 = "pair-v2"


def env_v2(*, split: str = "train", level: int | Iterable[int] | None = None, problems_per_cell: int | None = None,
           **kwargs: Any) -> CoopEnv:
    """``coop_procedural-v2`` (not registered yet: its calibration is open): level 1 and the cooperative
    level; see the package docstring for the arguments."""
    return _make(NAME_V2, "v2", split, level, problems_per_cell, checks=True, levels=LEVELS_V2,
                 prompts=PROMPTS_V2, **kwargs)


def env(*, split: str = "train", level: int | Iterable[int] | None = None, problems_per_cell: int | None = None,
        **kwargs: Any) -> CoopEnv:
    """``coop_procedural-v1``: levels 1-3 of v0's generators under the v2 rules and the draw checks."""
    return _make(NAME, "v2", split, level, problems_per_cell, checks=True, **kwargs)


def env_v0(*, split: str = "train", level: int | Iterable[int] | None = None, problems_per_cell: int | None = None,
           **kwargs: Any) -> CoopEnv:
    """The superseded ``coop_procedural-v0`` (``v1`` rules, no draw checks); warns with its holes."""
    warn_v1("coop_procedural-v0", NAME)
    return _make("coop_procedural-v0", "v1", split, level, problems_per_cell, **kwargs)


def _make(name: str, rules: str, split: str, level: Any, problems_per_cell: int | None, checks: bool = False,
          levels: tuple[int, ...] = LEVELS, prompts: str = "", **kwargs: Any) -> CoopEnv:
    if "data_path" in kwargs:
        raise TypeError(f"{name} generates its problems and has no data_path.")
    chosen = chosen_levels(level, levels)
    rows = split_rows(split, chosen, checked_per_cell(split, problems_per_cell), checks, levels, prompts)
    made = coding_env(SUITE, rows, split="all", name=name, rules=rules, **kwargs)
    info = suite_info(split, chosen, rows, levels)
    if COOPERATIVE_LEVEL in levels:
        info["cooperative_levels"] = [COOPERATIVE_LEVEL]
    made.metadata = {**made.metadata, "suite": info}
    return made


def split_rows(split: str, levels: tuple[int, ...], per_cell: int | None = None, checks: bool = False,
               version_levels: tuple[int, ...] = LEVELS, prompts: str = "") -> Sequence[dict[str, Any]]:
    """The rows of ``split`` at ``levels`` of the version's ``version_levels``: a lazy endless-looking
    sequence for train, a fixed tuple otherwise; ``checks``: v1's draws (:mod:`.draw_checks`);
    ``prompts``: the prompt set the rows name."""
    if split == "train":
        return TrainRows(tuple(TRAIN_FAMILIES), levels, checks=checks, prompts=prompts)
    return tuple(with_prompts(row, prompts) for row in fixed_rows(split, per_cell, checks, version_levels)
                 if row["level"] in levels)


def checked_per_cell(split: str, per_cell: int | None) -> int | None:
    """``problems_per_cell`` if it fits ``split``: a whole number in 1..MAX_PER_CELL, for a fixed split only."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}.")
    if per_cell is None:
        return None
    if split == "train":
        raise ValueError("problems_per_cell sizes the fixed splits (test, heldout_families); "
                         "the train split draws without end.")
    if not isinstance(per_cell, int) or isinstance(per_cell, bool) or not 1 <= per_cell <= MAX_PER_CELL:
        raise ValueError(f"problems_per_cell must be a whole number from 1 to {MAX_PER_CELL}, got {per_cell!r}.")
    return per_cell


def chosen_levels(level: int | Iterable[int] | None, allowed: tuple[int, ...] = LEVELS) -> tuple[int, ...]:
    if level is None:
        return allowed
    levels = (level,) if isinstance(level, int) and not isinstance(level, bool) else tuple(level)
    if not levels or any(not isinstance(x, int) or isinstance(x, bool) or x not in allowed for x in levels):
        raise ValueError(f"level must be one of {allowed} or a list of them, got {level!r}.")
    return tuple(sorted(set(levels)))


def suite_info(split: str, levels: tuple[int, ...], rows: Sequence[dict[str, Any]],
               allowed: tuple[int, ...] = LEVELS) -> dict[str, Any]:
    """What the env holds, so a narrowed evaluation is visible (``env.metadata["suite"]``)."""
    families = TRAIN_FAMILIES if split != "heldout_families" else HELDOUT_FAMILIES
    return {"split": split, "levels": list(levels), "narrowed": levels != allowed,
            "families": list(families), "problems": len(rows)}
