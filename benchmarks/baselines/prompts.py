"""The whole-solution prompt of the single-model baseline.

A task may define ``single_agent_prompt(index)`` (the coding tasks do: the same prompt as their
``team="single"`` mode); other tasks fall back to the last role's prompt, and the other roles stay
silent.
"""

from __future__ import annotations

from typing import Any


def single_agent_prompt(task: Any, index: int, fallback: str) -> str:
    own = getattr(task, "single_agent_prompt", None)
    return own(index) if callable(own) else fallback
