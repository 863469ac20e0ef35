"""The feedback interface and the two providers that need nothing outside the env."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # a runtime import would be circular: the core imports this package
    from llm_coop_envs.core.task import Evaluation


@dataclasses.dataclass(frozen=True)
class FeedbackContext:
    """Everything a provider may look at after a turn."""

    task_id: str
    turn: int
    num_turns: int
    prompts: Mapping[str, str]
    """Each agent's first-turn observation (the problem as that agent saw it)."""
    replies: Mapping[str, str]
    evaluation: Evaluation
    episode_ends: bool = False
    """True when no agent will read this feedback (last turn, or solved with ``stop_when_solved``),
    so a costly provider may skip its work. Providers must also treat ``turn == num_turns`` as final."""


@runtime_checkable
class FeedbackProvider(Protocol):
    """Returns one feedback text per agent. Must not raise; must be cheap to deep-copy."""

    deterministic: bool

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]: ...


def is_deterministic(provider: object) -> bool:
    """Whether ``provider`` gives the same feedback for the same seed and replies.

    Providers say so with a ``deterministic`` attribute; one without it is taken as deterministic,
    like a user's plain function. An env built with a non-deterministic provider (``"llm"``) cannot
    promise reproducible episodes.
    """
    return bool(getattr(provider, "deterministic", True))


class TestsFeedback:
    """The task's own verdict: failed tests and syntax errors (coding), failed reward levels (writing)."""

    deterministic = True

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]:
        return {agent: context.evaluation.feedback.get(agent, "") for agent in context.replies}


class PlainFeedback:
    """Only asks for a revision; the ablation without information."""

    deterministic = True

    def __init__(self, message: str = "Revise your answer.") -> None:
        self.message = message

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]:
        return dict.fromkeys(context.replies, self.message)
