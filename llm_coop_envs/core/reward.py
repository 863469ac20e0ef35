"""The joint reward: a total with its named components, so each can be logged on its own."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType


@dataclasses.dataclass(frozen=True)
class RewardResult:
    """A joint reward. ``components`` maps a component name (e.g. ``"tests"``) to its share of ``total``."""

    total: float
    components: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not math.isfinite(self.total):
            raise ValueError(f"A reward must be a finite number, got {self.total!r}.")
        object.__setattr__(self, "total", float(self.total))
        object.__setattr__(self, "components", MappingProxyType({k: float(v) for k, v in self.components.items()}))

    @classmethod
    def from_components(cls, components: Mapping[str, float]) -> RewardResult:
        """A reward whose total is the sum of its components."""
        return cls(total=sum(components.values()), components=components)

    @classmethod
    def coerce(cls, value: RewardResult | float | int) -> RewardResult:
        """Accept what a user's reward callable returns: a RewardResult or a plain number."""
        if isinstance(value, RewardResult):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return cls(total=float(value), components={"custom": float(value)})
        raise TypeError(f"A reward function must return a number or a RewardResult, got {type(value).__name__}.")
