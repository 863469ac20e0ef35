"""What a family's generator returns: one problem before its tests are computed.

A family writes the prompt's words and the two reference functions and proposes inputs; the
builder (:mod:`.build`) runs the references to get every expected value, so a family never
states an answer by hand.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any


class Rejected(Exception):
    """The draft cannot make a sound problem (too few distinct tests, ...): draw again."""


@dataclasses.dataclass(frozen=True)
class Draft:
    entry_point: str
    params: str
    """Main's parameters as written in its signature, e.g. ``"orders, limit"``."""
    summary: str
    """What main returns, in words (the docstring before the examples)."""
    helper_signature: str
    helper_doc: str
    """One sentence of what ``aux`` returns; never the helper-only fact."""
    reference_helper: str
    reference_main: str
    inputs: list[tuple[Any, ...]]
    """Argument tuples for main: the first one or two become the public examples, the rest hidden tests."""
    helper_fact: str = ""
    """A rule, table or constant that only the helper is told ("" when main's prompt says everything)."""
    compare: str = "eq"
    """``"eq"``, or ``"isclose"`` when main returns a float."""
    public_count: int = 1


def int_list(rng: random.Random, length: int, low: int, high: int) -> list[int]:
    return [rng.randint(low, high) for _ in range(length)]


def sizes(level: int) -> tuple[int, int]:
    """Shortest and longest input list at a level: longer lists and the empty list come with difficulty."""
    return {1: (1, 4), 2: (2, 6)}.get(level, (0, 9))


def pick(rng: random.Random, options: list[Any] | tuple[Any, ...]) -> Any:
    return options[rng.randrange(len(options))]
