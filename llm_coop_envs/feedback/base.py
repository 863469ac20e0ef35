"""The feedback interface and the two providers that need nothing outside the env."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class FeedbackProvider(Protocol):
    """Returns one feedback text per agent. Must not raise; must be cheap to deep-copy."""

    deterministic: bool

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]: ...


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
