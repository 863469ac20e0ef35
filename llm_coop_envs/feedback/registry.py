"""Resolve the ``feedback=`` argument of an env: a provider name or a user's callable."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llm_coop_envs.feedback.base import FeedbackContext, FeedbackProvider, PlainFeedback, TestsFeedback

_NAMES = ("tests", "plain", "llm")


class _CallableFeedback:
    """Wraps a plain user function ``f(context) -> {agent: text}``; assumed deterministic."""

    deterministic = True

    def __init__(self, function: Callable[[FeedbackContext], Mapping[str, str]]) -> None:
        self.function = function

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]:
        return self.function(context)


def feedback_provider(spec: str | FeedbackProvider | Callable[..., Any], **options: Any) -> FeedbackProvider:
    """``"tests"``, ``"plain"``, ``"llm"`` (options go to its constructor), or any callable."""
    if isinstance(spec, str):
        if spec == "tests":
            return TestsFeedback()
        if spec == "plain":
            return PlainFeedback(**options)
        if spec == "llm":
            from llm_coop_envs.feedback.llm import LLMFeedback

            return LLMFeedback(**options)
        raise ValueError(f"Unknown feedback provider {spec!r}; choose one of {_NAMES} or pass a callable.")
    if isinstance(spec, FeedbackProvider):
        return spec
    if callable(spec):
        return _CallableFeedback(spec)
    raise TypeError(f"feedback must be one of {_NAMES} or a callable, got {type(spec).__name__}.")
