"""Problems from seeds: one row per (stream, index), and the three splits.

Every draw is seeded with sha256 of its stream, family, level, index and attempt, so the same
index gives the same row in every process. The train and test streams can never meet: a
``train`` row is kept only when the first bits of the sha256 of its prompt and of its hidden test
are both 0, a ``test`` row only when both are 1; any other draw is redrawn (next attempt). Two
rows sharing a prompt or a test therefore always fall in the same split.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from typing import Any, overload

from llm_coop_envs.coding.procedural.build import build_row, sha256_text
from llm_coop_envs.coding.procedural.draft import Rejected
from llm_coop_envs.coding.procedural.families import (COOPERATIVE_LEVEL, HELDOUT_FAMILIES, LEVELS, TRAIN_FAMILIES,
                                                     draft_for)

TRAIN_SIZE = 10**6
TEST_PER_CELL = 10
"""Test problems per (training family, level): 12 families x 3 levels x 10 = 360."""
HELDOUT_PER_CELL = 8
"""Problems per (held-out family, level): 4 x 3 x 8 = 96."""
MAX_ATTEMPTS = 200
MAX_CHECKED_ATTEMPTS = 5000
"""v1's draw checks keep as few as 1 % of some cells' draws (longest_run at level 3, valid_codes at level 1)."""
MAX_CELL_DRAWS_PER_PROBLEM = 20
"""A fixed cell gives up (and says so) after this many draws per distinct problem asked for."""
MAX_PER_CELL = 200
"""The most problems per (family, level) a fixed split may hold (``problems_per_cell``)."""

Row = dict[str, Any]


def generate_row(stream: str, family: str, level: int, index: int, checks: bool = False) -> Row:
    """The row drawn for ``index`` of ``stream`` ("train", "test" or "heldout_families"); ``checks``:
    keep only draws that pass the v1 draw checks (:mod:`.draw_checks`)."""
    attempts = MAX_CHECKED_ATTEMPTS if checks else MAX_ATTEMPTS
    for attempt in range(attempts):
        rng = random.Random(_seed(stream, family, level, index, attempt))
        try:
            row = build_row(draft_for(family, rng, level), family, level, stream, checks)
        except Rejected:
            continue
        if _side(row) == _WANTED.get(stream, _side(row)):
            return row
    raise RuntimeError(f"No sound {family} problem at level {level} for {stream}/{index} in {attempts} draws.")


def _seed(*parts: object) -> int:
    return int(sha256_text("/".join(map(str, parts)))[:16], 16)


def _side(row: Row) -> tuple[int, int]:
    return int(sha256_text(row["prompt"])[0], 16) & 1, int(sha256_text(row["test"])[0], 16) & 1


_WANTED = {"train": (0, 0), "test": (1, 1)}


class TrainRows(Sequence):
    """Item ``i`` is a fresh training problem, built on first access from seed ``i``; families and
    levels take turns (family ``i % F``, level ``(i // F) % L``) so every stretch is balanced."""

    def __init__(self, families: Sequence[str] = tuple(TRAIN_FAMILIES), levels: Sequence[int] = LEVELS,
                 size: int = TRAIN_SIZE, checks: bool = False, prompts: str = "") -> None:
        self.families, self.levels, self.size, self.checks = tuple(families), tuple(levels), size, checks
        self.prompts = prompts
        """The prompt set the rows name (``"pair-v2"`` for ``coop_procedural-v2``; "" for the default prompts)."""

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        if not -self.size <= index < self.size:
            raise IndexError(f"training problem {index} is out of range (0 to {self.size - 1}).")
        return with_prompts(_train_row(self.families, self.levels, index % self.size, self.checks), self.prompts)

    def index_of(self, task_id: str) -> int:
        """The index of a problem drawn in this process (the env's ``reset(options={"task_id": ...})``);
        a task id is a content hash, so an undrawn one cannot be found without drawing a million problems."""
        found = _DRAWN.get((self.families, self.levels, self.checks), {}).get(task_id)
        if found is None:
            raise ValueError(f"Training problem {task_id!r} has not been drawn in this process: training problems "
                             "are endless, pick one by index (reset(options={'index': i})).")
        return found

    def __deepcopy__(self, memo: dict) -> TrainRows:
        return self  # immutable: copies of an env can share it

    def __reduce__(self):
        return TrainRows, (self.families, self.levels, self.size, self.checks, self.prompts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrainRows) and (self.families, self.levels, self.size, self.checks, self.prompts) == (
            other.families, other.levels, other.size, other.checks, other.prompts)

    def __hash__(self) -> int:
        return hash((self.families, self.levels, self.size, self.checks, self.prompts))


def with_prompts(row: Row, prompts: str) -> Row:
    """``row`` naming its version's prompt set (:mod:`llm_coop_envs.coding.pair_prompts`); unchanged for ""."""
    return {**row, "prompts": prompts} if prompts else row


@functools.lru_cache(maxsize=4096)
def _train_row(families: tuple[str, ...], levels: tuple[int, ...], index: int, checks: bool = False) -> Row:
    family = families[index % len(families)]
    level = levels[(index // len(families)) % len(levels)]
    row = generate_row("train", family, level, index, checks)
    _DRAWN.setdefault((families, levels, checks), {})[row["task_id"]] = index
    return row


_DRAWN: dict[tuple[tuple[str, ...], tuple[int, ...], bool], dict[str, int]] = {}
"""task id -> index of every training problem drawn in this process, per (families, levels, checks)."""


@functools.lru_cache(maxsize=None)
def fixed_rows(stream: str, per_cell: int | None = None, checks: bool = False,
               levels: tuple[int, ...] = LEVELS) -> tuple[Row, ...]:
    """The fixed test or held-out-families set: ``per_cell`` distinct problems per family and level
    (default ``TEST_PER_CELL`` or ``HELDOUT_PER_CELL``), in turns: problem ``i`` is at level
    ``i % L`` (counted from the first level) of family ``(i // L) % F``, the ``i // (F * L)``-th
    problem of that cell. So the first 3 problems span every level, the first ``F * L`` every family
    at every level, and a split narrowed to one level takes its families in turns. A larger
    ``per_cell`` only appends: its first rows are the default set. ``levels``: the version's levels
    (``coop_procedural-v2``: 1 and the cooperative level)."""
    families, default = (TRAIN_FAMILIES, TEST_PER_CELL) if stream == "test" else (HELDOUT_FAMILIES, HELDOUT_PER_CELL)
    per_cell = default if per_cell is None else per_cell
    cells = {(family, level): _distinct_cell(stream, family, level, per_cell, checks)
             for family in families for level in levels}
    return tuple(cells[family, level][turn] for turn in range(per_cell) for family in families for level in levels)


def _identity(row: Row) -> str:
    """What makes two rows of a cell different problems: main's prompt (levels 1-3, as v0 and v1 count
    them); at the cooperative level main's prompt does not hold the fact, so the whole content counts."""
    return row["task_id"] if row["level"] == COOPERATIVE_LEVEL else row["prompt"]


def _distinct_cell(stream: str, family: str, level: int, count: int, checks: bool = False) -> list[Row]:
    cell: dict[str, Row] = {}
    for index in range(MAX_CELL_DRAWS_PER_PROBLEM * count):
        row = generate_row(stream, family, level, index, checks)
        cell.setdefault(_identity(row), row)
        if len(cell) == count:
            return list(cell.values())
    raise ValueError(f"{family} has only {len(cell)} distinct {stream} problems at level {level} in "
                     f"{MAX_CELL_DRAWS_PER_PROBLEM * count} draws: ask for fewer problems per cell")
