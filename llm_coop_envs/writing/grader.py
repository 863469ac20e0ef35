"""The optional grader level: an outside model grades a pair on the paper's three criteria.

Off by default. Pass ``grader={"base_url": "http://127.0.0.1:8000/v1", "model": "..."}`` (or a
:class:`WritingGrader`) to a writing env: the reward then has a ``grader`` component, the grader's mean
grade in [0, 1] times ``reward_weights["grader"]``. Any OpenAI-compatible chat endpoint works; the
request goes through the multi-turn reviewer's client (:mod:`llm_coop_envs.feedback.chat_client`).

The grader sees the source and the two texts and answers with a JSON object of three integer grades
from 1 to 5, one per criterion (:data:`CRITERIA`); a grade g counts (g - 1) / 4. Grades are cached
by a hash of the request, so a pair written twice is graded once. A pair that fails the structure
gates is not sent (its grader component is 0).

When the endpoint cannot be reached, times out after its retries, or answers anything but the
three grades, ``on_error="zero"`` (the default) gives a grader component of 0, puts the reason in
``infos[agent]["details"]["grader"]["error"]`` and a line in the feedback, and caches nothing (the
next evaluation asks again); ``on_error="raise"`` raises :class:`GraderError` instead.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

from llm_coop_envs.feedback.chat_client import ReviewerError, chat_completion

CRITERIA = {
    "structure": "Each part does its own job (the first role's and the second role's, as described) and the two "
    "parts fit together without repeating each other.",
    "style": "The two parts read as one text: consistent tone, terminology and level of detail.",
    "coherence": "Ideas follow logically within and across the parts, and everything said is faithful to the source.",
}
"""The paper's three criteria, as the grader is asked to apply them."""

RUBRIC_VERSION = "writing-grader-1"
"""Part of the cache key: a changed rubric never reuses old grades."""


_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class GraderError(Exception):
    """The grader gave no usable grades; ``str(error)`` is a short reason without secrets."""


@dataclasses.dataclass(frozen=True)
class GraderConfig:
    base_url: str
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    """Name of the environment variable holding the key (read at each request; never stored)."""
    timeout_s: float = 30.0
    max_retries: int = 2
    backoff_s: float = 0.5
    max_tokens: int = 200
    max_chars_per_part: int = 6_000
    max_response_bytes: int = 1_000_000
    on_error: str = "zero"
    """``"zero"``: a failed grading scores 0 and says why in ``details``; ``"raise"``: raise GraderError."""
    cache_size: int = 10_000

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"grader base_url must start with http:// or https://, got {self.base_url!r}.")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("grader model must be a non-empty model name.")
        if self.on_error not in ("zero", "raise"):
            raise ValueError(f"grader on_error must be 'zero' or 'raise', got {self.on_error!r}.")
        if not self.timeout_s > 0 or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError("grader timeout_s must be > 0 and max_retries an integer >= 0.")
        for name in ("max_tokens", "max_chars_per_part", "max_response_bytes", "cache_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"grader {name} must be a positive integer, got {getattr(self, name)!r}.")

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


@dataclasses.dataclass(frozen=True)
class Grades:
    """What the grader answered: grades in [0, 1] by criterion, or the reason there are none."""

    scores: Mapping[str, float]
    error: str | None = None
    cached: bool = False

    @property
    def mean(self) -> float:
        return sum(self.scores.values()) / len(self.scores) if self.scores else 0.0


class EndpointReader:
    """What the grader and the claims judge share: a chat endpoint's settings, a bounded cache keyed by
    request hash, a lock (thread-safe), and the coercion of a user's option into one."""

    option = "grader"
    """The env argument this reader comes from (named in the coercion error)."""

    def __init__(self, config: GraderConfig) -> None:
        self.config = config
        self._cache: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def coerce(cls, value: Any):
        """None, a reader of this class, a GraderConfig or a dict of its options (``{"base_url": ..., "model": ...}``)."""
        if value is None or isinstance(value, cls):
            return value
        if isinstance(value, GraderConfig):
            return cls(value)
        if isinstance(value, Mapping):
            return cls(GraderConfig(**dict(value)))
        raise TypeError(f"{cls.option} must be None, a dict of GraderConfig options or a {cls.__name__}, "
                        f"got {type(value).__name__}.")


class WritingGrader(EndpointReader):
    """Grades pairs through a chat endpoint; thread-safe, with a bounded cache keyed by request hash."""

    def grade(self, task: str, roles: tuple[str, str], texts: tuple[str, str], source: str) -> Grades:
        """Grades of ``texts`` (by ``roles``) written from ``source``; ``task`` says what each role writes."""
        payload = self._payload(task, roles, texts, source)
        key = hashlib.sha256(json.dumps([RUBRIC_VERSION, payload], sort_keys=True).encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return Grades(dict(self._cache[key]), cached=True)
        try:
            scores = self._ask(payload)
        except GraderError as error:
            if self.config.on_error == "raise":
                raise
            return Grades({}, error=str(error))
        with self._lock:
            self._cache[key] = scores
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        return Grades(dict(scores))

    def _ask(self, payload: dict[str, Any]) -> dict[str, float]:
        config = self.config
        api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
        try:
            answer = chat_completion(
                config.url,
                payload,
                api_key=api_key,
                timeout_s=config.timeout_s,
                max_retries=config.max_retries,
                backoff_s=config.backoff_s,
                max_response_bytes=config.max_response_bytes,
            )
        except ReviewerError as error:
            raise GraderError(f"grader unavailable: {error}") from None
        return parse_grades(answer)

    def _payload(self, task: str, roles: tuple[str, str], texts: tuple[str, str], source: str) -> dict[str, Any]:
        clip = self.config.max_chars_per_part
        criteria = "\n".join(f"- {name}: {text}" for name, text in CRITERIA.items())
        example = json.dumps(dict.fromkeys(CRITERIA, 3))
        system = (
            "You grade two texts that two writers produced together from one source. Grade each criterion "
            f"with an integer from 1 (very poor) to 5 (excellent):\n{criteria}\n"
            "Text that is not about the source, repeats itself, or is not fluent prose gets 1 on every "
            f"criterion. Answer with only a JSON object such as {example}."
        )
        user = "\n\n".join(
            [f"Task: {task}", f"## Source\n{source[:clip]}"]
            + [f"## The {role} text\n{text[:clip]}" for role, text in zip(roles, texts)]
            + [f"Answer with only the JSON object of the three grades: {example}"]
        )
        return {
            "model": self.config.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0.0,
            "max_tokens": self.config.max_tokens,
        }

    def __deepcopy__(self, memo: dict) -> WritingGrader:
        return self  # env copies share one grader and its cache

    def __repr__(self) -> str:
        return f"WritingGrader(url={self.config.url!r}, model={self.config.model!r})"


def parse_grades(answer: str) -> dict[str, float]:
    """The three grades in [0, 1] from the grader's answer, or GraderError naming what is wrong."""
    match = _FENCED.search(answer)
    text = match.group(1) if match else answer
    start, end = text.find("{"), text.rfind("}")
    try:
        grades = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        grades = None
    if not isinstance(grades, dict):
        raise GraderError("the grader's answer holds no JSON object")
    scores = {}
    for name in CRITERIA:
        value = grades.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 5:
            raise GraderError(f"the grader's grade for {name!r} is missing or not a number from 1 to 5")
        scores[name] = (float(value) - 1.0) / 4.0
    return scores
