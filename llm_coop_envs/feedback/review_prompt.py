"""What the outside reviewer is asked, and how its answer is read back into one text per agent."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from llm_coop_envs.feedback.base import FeedbackContext

_MAX_ATTEMPTS = 64
"""Object starts tried per text: a decode error costs time linear in the text (it counts lines),
so an answer full of braces must not cost quadratic time."""
_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

SYSTEM_PROMPT = (
    "You review the joint work of a team of agents who solve one task together; each agent wrote "
    "its own part. Suggest concrete edits that would make the joint work correct and complete. "
    "Answer with only a JSON object that maps each agent's name to one short suggestion for that "
    "agent, for example {example}. Address every agent, even when its part looks right."
)


def review_messages(context: FeedbackContext, *, max_chars: int, include_checks: bool) -> list[dict[str, str]]:
    """Chat messages asking for one suggestion per agent on the joint work of ``context``."""
    agents = list(context.replies)
    example = json.dumps({agent: "..." for agent in agents})
    sections = [f"Task {context.task_id}, turn {context.turn} of {context.num_turns}."]
    for agent in agents:
        sections.append(f"## The {agent} agent's instructions\n{_clip(context.prompts.get(agent, ''), max_chars)}")
    for agent in agents:
        sections.append(f"## The {agent} agent's reply\n{_clip(context.replies[agent], max_chars)}")
    if include_checks:
        sections.append(_checks_section(context))
    sections.append(f"Answer with only this JSON object, one suggestion per agent: {example}")
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(example=example)},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


def _checks_section(context: FeedbackContext) -> str:
    evaluation = context.evaluation
    solved = f"solved: {'yes' if evaluation.solved else 'no'}."
    components = ", ".join(f"{name}={value:.3f}" for name, value in evaluation.reward.components.items())
    score = "" if evaluation.private_reward else (
        f"Joint reward {evaluation.reward.total:.3f} ({components or 'no components'}); ")
    lines = ["## Automatic checks", (score + solved) if score else solved.capitalize()]
    lines += [f"For {agent}: {text}" for agent, text in evaluation.feedback.items() if text.strip()]
    return "\n".join(lines)


def _clip(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n[... {len(text) - max_chars} more characters not shown]"


def parse_suggestions(answer: str, agents: Sequence[str]) -> dict[str, str]:
    """The suggestions for the agents named in the reviewer's ``answer``; agents it skipped are absent.

    Accepts a bare JSON object, one inside a fenced block, or one with prose around it, and one
    level of nesting (``{"feedback": {...}}``). Agent names match case-insensitively.
    """
    for candidate in _json_objects(answer):
        found = _suggestions_in(candidate, agents)
        if found:
            return found
    return {}


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that can be decoded from ``text``: fenced blocks first, then any ``{...}``."""
    decoder = json.JSONDecoder()
    sources = [match.group(1) for match in _FENCED.finditer(text)] + [text]
    objects: list[dict[str, Any]] = []
    for source in sources:
        position, attempts = source.find("{"), 0
        while position != -1 and attempts < _MAX_ATTEMPTS:
            attempts += 1
            try:
                value, end = decoder.raw_decode(source, position)
            except (ValueError, RecursionError):  # not JSON here, or absurdly deep nesting
                position = source.find("{", position + 1)
                continue
            if isinstance(value, dict):
                objects.append(value)
            position = source.find("{", end)
    return objects


def _suggestions_in(candidate: Mapping[str, Any], agents: Sequence[str]) -> dict[str, str]:
    found = _match_agents(candidate, agents)
    if found:
        return found
    for value in candidate.values():  # e.g. {"suggestions": {"helper": ..., "main": ...}}
        if isinstance(value, Mapping):
            found = _match_agents(value, agents)
            if found:
                return found
    return {}


def _match_agents(mapping: Mapping[str, Any], agents: Sequence[str]) -> dict[str, str]:
    by_name = {str(key).strip().lower(): value for key, value in mapping.items()}
    found = {}
    for agent in agents:
        text = _as_text(by_name.get(agent.lower()))
        if text:
            found[agent] = text
    return found


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "\n".join(f"- {_as_text(item)}" for item in value if _as_text(item))
    if value is None or isinstance(value, Mapping):
        return ""
    return str(value)
