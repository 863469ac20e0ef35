"""``"llm"`` feedback: an outside model reviews the joint work and suggests edits for each agent.

Any OpenAI-compatible chat endpoint works (OpenAI, vLLM, llama.cpp, Ollama, TGI...):

>>> env = llm_coop_envs.make(  # doctest: +SKIP
...     "coop_humaneval-v0", num_turns=2, feedback="llm",
...     feedback_options={"base_url": "http://127.0.0.1:8000/v1", "model": "Qwen2.5-7B-Instruct"},
... )

The provider never breaks an episode: when the reviewer cannot be reached, times out after its
retries, or answers something that is not the requested JSON, every agent gets the ``fallback``
provider's feedback (the tests feedback by default) with a note saying that the reviewer was
unavailable and why; an agent the reviewer forgot gets the fallback text with a similar note.
A reviewer model is not deterministic, so this provider sets ``deterministic = False``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from llm_coop_envs.feedback.base import FeedbackContext, FeedbackProvider, TestsFeedback
from llm_coop_envs.feedback.chat_client import ReviewerError, chat_completion
from llm_coop_envs.feedback.review_prompt import parse_suggestions, review_messages

BASE_URL_VARIABLES = ("LLM_COOP_FEEDBACK_BASE_URL", "OPENAI_BASE_URL")
MODEL_VARIABLE = "LLM_COOP_FEEDBACK_MODEL"
_HIDDEN = "[hidden]"


@dataclasses.dataclass(frozen=True)
class ReviewerConfig:
    """How to reach the reviewer. Holds the *name* of the API key's variable, never the key."""

    url: str
    """Full ``.../chat/completions`` URL."""
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    """Environment variable read at each request for the key (sent as ``Authorization: Bearer``);
    unset or ``None`` sends no key, as local servers expect."""
    timeout_s: float = 30.0
    """Wall-clock limit of one attempt."""
    max_retries: int = 2
    """Extra attempts after a timeout, a connection error or a 408/429/5xx answer."""
    backoff_s: float = 0.5
    """Wait before retry ``k`` (0-based) is ``backoff_s * 2**k``."""
    temperature: float = 0.0
    max_tokens: int = 512
    max_chars_per_part: int = 6_000
    """Each prompt and reply shown to the reviewer is cut to this many characters."""
    include_checks: bool = True
    """Also show the reviewer the reward and the task's own feedback (failed tests, levels)."""
    review_final_turn: bool = False
    """Consult the reviewer after the last turn too. Off by default: no agent reads that feedback
    (it only reaches ``infos``), so the fallback's text is used there at no cost."""
    max_response_bytes: int = 1_000_000

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.url!r}.")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("model must be a non-empty model name, e.g. model='gpt-4o-mini'.")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive (seconds per attempt), got {self.timeout_s!r}.")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {self.max_retries!r}.")
        if self.backoff_s < 0:
            raise ValueError(f"backoff_s must be >= 0, got {self.backoff_s!r}.")
        for name in ("max_tokens", "max_chars_per_part", "max_response_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")

    @property
    def max_seconds_per_review(self) -> float:
        """Worst-case wall-clock time of one review, retries and backoff included."""
        attempts = self.max_retries + 1
        return attempts * self.timeout_s + sum(self.backoff_s * 2**k for k in range(self.max_retries))


class LLMFeedback:
    """Feedback from an outside reviewer model; see the module docstring.

    Stateless after construction (the key is read from the environment at each request, each
    request opens its own connection), so env copies stepped in parallel threads can share it.
    """

    deterministic = False

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 30.0,
        max_retries: int = 2,
        temperature: float = 0.0,
        max_tokens: int = 512,
        fallback: FeedbackProvider | None = None,
        **options: Any,
    ) -> None:
        self.config = ReviewerConfig(
            url=_chat_url(_resolve_base_url(base_url)),
            model=_resolve_model(model),
            api_key_env=api_key_env,
            timeout_s=timeout_s,
            max_retries=max_retries,
            temperature=temperature,
            max_tokens=max_tokens,
            **options,
        )
        self.fallback = fallback if fallback is not None else TestsFeedback()

    def __call__(self, context: FeedbackContext) -> Mapping[str, str]:
        api_key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        try:
            feedback = self._review(context, api_key)
        except Exception as error:  # noqa: BLE001  (an episode must never break on its reviewer)
            feedback = self._fallback(context, f"reviewer unavailable: {_reason(error)}")
        return {agent: _without_secret(text, api_key) for agent, text in feedback.items()}

    def _review(self, context: FeedbackContext, api_key: str | None) -> dict[str, str]:
        if self._is_final(context) and not self.config.review_final_turn:
            return self._fallback(context, "final turn: the reviewer was not consulted")
        answer = chat_completion(
            self.config.url,
            self._payload(context),
            api_key=api_key,
            timeout_s=self.config.timeout_s,
            max_retries=self.config.max_retries,
            backoff_s=self.config.backoff_s,
            max_response_bytes=self.config.max_response_bytes,
        )
        suggestions = parse_suggestions(answer, list(context.replies))
        if not suggestions:
            raise ReviewerError("the answer holds no JSON suggestion for any agent")
        missing = [agent for agent in context.replies if agent not in suggestions]
        if missing:
            fallback = self._fallback(context, "the reviewer gave no suggestion for you")
            suggestions.update({agent: fallback[agent] for agent in missing})
        return {agent: suggestions[agent] for agent in context.replies}

    def _payload(self, context: FeedbackContext) -> dict[str, Any]:
        messages = review_messages(
            context, max_chars=self.config.max_chars_per_part, include_checks=self.config.include_checks
        )
        return {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }

    def _fallback(self, context: FeedbackContext, why: str) -> dict[str, str]:
        """The fallback provider's texts, each followed by a note saying why they replace the reviewer's."""
        try:
            texts = dict(self.fallback(context))
        except Exception as error:  # noqa: BLE001
            texts, why = {}, f"{why}; the fallback provider failed too ({type(error).__name__})"
        note = f"({why}; this is the automatic feedback instead)"
        return {agent: f"{str(texts.get(agent, '')).strip()}\n{note}".strip() for agent in context.replies}

    @staticmethod
    def _is_final(context: FeedbackContext) -> bool:
        return context.turn >= context.num_turns or bool(getattr(context, "episode_ends", False))

    def __deepcopy__(self, memo: dict) -> LLMFeedback:
        return self  # immutable configuration, no connections: copies of an env share one reviewer

    def __repr__(self) -> str:
        return f"LLMFeedback(url={self.config.url!r}, model={self.config.model!r})"


def _resolve_base_url(base_url: str | None) -> str:
    for candidate in (base_url, *(os.environ.get(name) for name in BASE_URL_VARIABLES)):
        if candidate:
            return candidate
    variables = " or ".join(BASE_URL_VARIABLES)
    raise ValueError(
        "The 'llm' feedback provider needs the reviewer's endpoint: pass "
        "feedback_options={'base_url': 'http://host:port/v1', 'model': ...} or set " + variables + "."
    )


def _resolve_model(model: str | None) -> str:
    model = model or os.environ.get(MODEL_VARIABLE)
    if not model:
        raise ValueError(
            f"The 'llm' feedback provider needs a model name: pass feedback_options={{'model': ...}} "
            f"or set {MODEL_VARIABLE}."
        )
    return model


def _chat_url(base_url: str) -> str:
    base_url = base_url.rstrip("/")
    return base_url if base_url.endswith("/chat/completions") else f"{base_url}/chat/completions"


def _reason(error: Exception) -> str:
    return str(error) if isinstance(error, ReviewerError) else f"unexpected {type(error).__name__}"


def _without_secret(text: str, secret: str | None) -> str:
    """A reviewer may echo what it was sent; make sure the key itself never reaches an agent or a log."""
    return text.replace(secret, _HIDDEN) if secret and len(secret) >= 4 else text
