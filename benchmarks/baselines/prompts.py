"""The whole-solution prompt of the single-model baseline.

A task may define ``single_agent_prompt(index)``; the coding tasks do not, so for them this module
asks for the complete entry-point function in the env's own words (code only, one block). Other
tasks fall back to the last role's prompt, and the other roles stay silent.
"""

from __future__ import annotations

from typing import Any

_CODE_ONLY = "Reply with Python code only, in one ```python block; no tests, no example usage, no explanations."


def single_agent_prompt(task: Any, index: int, fallback: str) -> str:
    own = getattr(task, "single_agent_prompt", None)
    if callable(own):
        return own(index)
    problems = getattr(task, "problems", None)
    if problems is not None and hasattr(problems[index], "entry_point"):
        problem = problems[index]
        return "\n".join(
            [
                "Solve this programming problem.",
                "",
                "Problem:",
                problem.prompt.rstrip(),
                "",
                f"Write the complete function `{problem.entry_point}` with the signature above, with any helper functions it needs.",
                _CODE_ONLY,
            ]
        )
    return fallback
