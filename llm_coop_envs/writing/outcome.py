"""The verdict of one reward level."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class LevelOutcome:
    name: str
    score: float
    """Credit in [0, 1] before the weight."""
    passed: bool
    """Whether scoring went on past this level."""
    message: str
    """What was measured and, if short of full credit, why (deterministic, with numbers)."""
