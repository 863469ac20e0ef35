"""What the baselines need from a model: replies for a batch of prompts, with token counts.

A :class:`ReplyGenerator` is any callable ``generate(prompts, agent) -> [Reply]``. The prompts are
env observations (plain text); the generator applies its model's chat template. ``agent`` lets one
object serve a team whose roles use different adapters. :class:`ScriptedGenerator` returns fixed
texts (tests, docs, dry runs); :mod:`benchmarks.baselines.trainers_adapter` wraps the trainers'
generation backends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable


@dataclasses.dataclass(frozen=True)
class Reply:
    """One generated reply."""

    text: str
    tokens: int = 0
    """Generated tokens (0 when the generator cannot count them)."""


@runtime_checkable
class ReplyGenerator(Protocol):
    """Produces one reply per prompt, in order."""

    def __call__(self, prompts: Sequence[str], agent: str) -> list[Reply]: ...


class ScriptedGenerator:
    """Replies from a script: a fixed text per agent, or a function ``(prompt, agent) -> text``.

    Token counts are whitespace-separated words, a stand-in that keeps efficiency tables filled.
    """

    def __init__(self, script: Mapping[str, str] | Callable[[str, str], str]) -> None:
        self.script = script
        self.calls: list[tuple[str, int]] = []
        """(agent, batch size) of every call, so tests can check batching."""

    def __call__(self, prompts: Sequence[str], agent: str) -> list[Reply]:
        self.calls.append((agent, len(prompts)))
        texts = [self._text(prompt, agent) for prompt in prompts]
        return [Reply(text, len(text.split())) for text in texts]

    def _text(self, prompt: str, agent: str) -> str:
        if callable(self.script):
            return self.script(prompt, agent)
        return self.script.get(agent, "")
