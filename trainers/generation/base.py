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
    top-p applied, :mod:`trainers.generation.distribution`); ``None`` when the backend does not report them."""


@runtime_checkable
class GenerationBackend(Protocol):
    """Turns requests into completions. Implementations: ``transformers_backend``, ``vllm_backend``."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """One list of ``request.num_samples`` completions per request, in order."""

    def sync_weights(self) -> None:
        """Called after every optimizer update: a backend holding its own copy of the weights reloads them."""


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """The reply up to (not including) the first stop string."""
    cut = len(text)
    for marker in stop:
        index = text.find(marker) if marker else -1
        if index != -1:
            cut = min(cut, index)
    return text[:cut]
