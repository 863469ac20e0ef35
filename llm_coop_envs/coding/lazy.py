"""The problems of a coding task, built from its rows: all at once for a list, on first use for a lazy sequence.

A list or tuple of rows (a dataset file) is checked whole when the env is made, so a broken row is
reported before training starts. Any other sequence (the procedural suite's endless training draws)
is built one problem at a time when first used, and kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

Problem = TypeVar("Problem")


class LazyProblems(Sequence, Generic[Problem]):
    def __init__(self, rows: Sequence[Mapping[str, Any]], build: Callable[[Mapping[str, Any], int], Problem]) -> None:
        self._rows, self._build = rows, build
        self._built: dict[int, Problem] = {}
        if isinstance(rows, (list, tuple)):
            for index in range(len(rows)):
                self[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> Problem:  # type: ignore[override]
        if not isinstance(index, int):
            raise TypeError(f"problem indices are ints, got {type(index).__name__}.")
        if index < 0:
            index += len(self)
        if index not in self._built:
            self._built[index] = self._build(self._rows[index], index)
        return self._built[index]

    def index_of(self, task_id: str) -> int | None:
        """The index of ``task_id`` when the rows can say it without a scan (lazy suites), else None."""
        finder = getattr(self._rows, "index_of", None)
        return finder(task_id) if callable(finder) else None
