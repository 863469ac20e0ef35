"""Feedback providers for multi-turn episodes: what each agent is told about the joint work."""

from llm_coop_envs.feedback.base import (
    FeedbackContext,
    FeedbackProvider,
    PlainFeedback,
    TestsFeedback,
    is_deterministic,
)
from llm_coop_envs.feedback.registry import feedback_provider

__all__ = [
    "FeedbackContext",
    "FeedbackProvider",
    "PlainFeedback",
    "TestsFeedback",
    "feedback_provider",
    "is_deterministic",
]
