"""The mutable bookkeeping of one episode, kept apart from the env so branching copies little."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class Episode:
    """Where an episode stands: which problem, which turn, who has replied, what happened so far."""

    index: int
    task_id: str
    prompts: dict[str, str]
    """Each agent's first-turn observation."""
    turn_prompts: dict[str, str]
    """Each agent's observation at the start of the current turn (revision prompts after turn one)."""
    observations: dict[str, str]
    turn: int = 1
    phase: int = 0
    """Sequential protocol: position in the acting order within the current turn."""
    cycles: int = 0
    """Env steps taken so far (what ``max_cycles`` counts)."""
    pending: dict[str, str] = dataclasses.field(default_factory=dict)
    """Replies given so far in the current turn."""
    last_replies: dict[str, str] = dataclasses.field(default_factory=dict)
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """One record per completed turn: observations, replies, reward, components, feedback."""

    def copy(self) -> Episode:
        # Strings are immutable, so shallow copies of the containers make an independent branch.
        return dataclasses.replace(
            self,
            prompts=dict(self.prompts),
            turn_prompts=dict(self.turn_prompts),
            observations=dict(self.observations),
            pending=dict(self.pending),
            last_replies=dict(self.last_replies),
            history=[dict(record) for record in self.history],
        )
