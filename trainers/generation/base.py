"""The generation protocol: what the trainer asks of any backend (transformers, vLLM, ...)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from trainers.config import SamplingConfig


@dataclasses.dataclass(frozen=True)
class GenerationRequest:
    """Sample ``num_samples`` replies of ``agent`` to ``observation`` (chat template applied by the backend)."""

    agent: str
    observation: str
    num_samples: int
    sampling: SamplingConfig


@dataclasses.dataclass(frozen=True)
class Completion:
    """One sampled reply, with the exact tokens the policy produced (training scores these ids)."""

    text: str
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    truncated: bool = False
    """True when the reply hit ``max_new_tokens`` without an end-of-sequence token."""
    logprobs: tuple[float, ...] | None = None
    """Log-probability of each of ``completion_ids`` under the sampling distribution (temperature and
    top-p applied, :mod:`llm_coop_envs.lm.distribution`); ``None`` when the backend does not report them."""


@runtime_checkable
class GenerationBackend(Protocol):
    """Turns requests into completions. Implementations: ``transformers_backend``, ``vllm_backend``."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """One list of ``request.num_samples`` completions per request, in order."""

    def sync_weights(self) -> None:
        """Called after every optimizer update: a backend holding its own copy of the weights reloads them."""


FENCE = "```"
VLLM_CODE_STOP = "\n```\n"
"""The closing fence as a plain stop string (what vLLM's ``stop`` parameter can express). It cannot
tell an opening fence from a closing one, so it is a fence on its own line after a newline: an opening
```` ```python ```` never matches, a bare opening ```` ``` ```` only when it follows a line of text."""


def code_block_end(text: str) -> int | None:
    """The index just after the closing fence of the first code block, or None while there is none.

    The opening fence (```` ``` ```` with or without a language) ends at its line's newline; the next
    ```` ``` ```` after that line closes the block."""
    opening = text.find(FENCE)
    if opening == -1:
        return None
    line_end = text.find("\n", opening + len(FENCE))
    if line_end == -1:
        return None
    closing = text.find(FENCE, line_end + 1)
    return None if closing == -1 else closing + len(FENCE)


def cut_reply(text: str, stop: Sequence[str], stop_after_code: bool = False) -> str:
    """The reply as the env sees it: cut before the first stop string and, with ``stop_after_code``,
    just after the closing fence of its first code block."""
    text = cut_at_stop(text, stop)
    end = code_block_end(text) if stop_after_code else None
    return text if end is None else text[:end]


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """The reply up to (not including) the first stop string."""
    cut = len(text)
    for marker in stop:
        index = text.find(marker) if marker else -1
        if index != -1:
            cut = min(cut, index)
    return text[:cut]
