"""A trapezoid band: full credit inside an ideal range, linear ramps to zero at the accepted edges."""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Band:
    """Scores a number: 1 in ``[ideal_low, ideal_high]``, 0 outside ``[low, high]``, linear in between.

    A value outside ``[low, high]`` fails the level that uses the band (scoring stops there).
    """

    low: float
    ideal_low: float
    ideal_high: float
    high: float

    def __post_init__(self) -> None:
        values = (self.low, self.ideal_low, self.ideal_high, self.high)
        if any(math.isnan(v) for v in values) or not self.low <= self.ideal_low <= self.ideal_high <= self.high:
            raise ValueError(
                f"A Band needs low <= ideal_low <= ideal_high <= high, got {values}; "
                "e.g. Band(1.1, 1.6, 3.2, 5.0)."
            )

    def contains(self, value: float) -> bool:
        """Whether ``value`` is accepted at all (the level passes and scoring goes on)."""
        return self.low <= value <= self.high

    def score(self, value: float) -> float:
        """Credit in [0, 1] for ``value``."""
        if not self.contains(value):
            return 0.0
        if value < self.ideal_low:
            return (value - self.low) / (self.ideal_low - self.low)
        if value > self.ideal_high:
            return (self.high - value) / (self.high - self.ideal_high)
        return 1.0

    def describe(self) -> str:
        """``"ideal 1.60–3.20, accepted 1.10–5.00"``."""
        return f"ideal {self.ideal_low:.2f}–{self.ideal_high:.2f}, accepted {self.low:.2f}–{self.high:.2f}"
