"""The first observation of each role.

The helper writes a function named ``aux`` (the name the MAGRPO paper's main agent relies on);
main writes the entry point and may call ``aux``. The wording depends on the protocol: in
``"parallel"`` main writes without seeing the helper's code, in ``"sequential"`` the environment
appends "The helper agent wrote: ..." to main's prompt.

A problem whose row carries a ``helper`` spec (``{"signature": "def aux(x):", "doc": "Return x
doubled."}``, as the embedded suites do) gets prompts that say exactly what ``aux`` takes and
returns; rows without one get the generic wording. A row's ``helper_fact`` (the procedural suite's
rule, table or constant) is shown to the helper only. A row that names the ``"pair-v2"`` prompt set
(``coop_procedural-v2``) gets the prompts of :mod:`llm_coop_envs.coding.pair_prompts` instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from llm_coop_envs.coding import pair_prompts
from llm_coop_envs.coding.problems import CodingProblem

HELPER_NAME = "aux"

_CODE_ONLY = "Reply with Python code only, in one ```python block; no tests, no example usage, no explanations."


def helper_prompt(problem: CodingProblem, protocol: str) -> str:
    if pair_prompts.uses_pair_prompts(problem):
        return pair_prompts.helper_prompt(problem)
    entry = problem.entry_point
    if protocol == "sequential":
        partner = f"The main agent will read your code, then write `{entry}` and call your function in it."
    else:
        partner = (
            f"The main agent writes `{entry}` at the same time as you, without seeing your code, "
            f"and will call your function `{HELPER_NAME}` in it."
        )
    lines = [
        "You are the helper agent of a two-agent programming team.",
        partner,
        "",
        "Problem:",
        problem.prompt.rstrip(),
        "",
        _helper_task(problem),
        *_fact_lines(problem),
        f"Do not write `{problem.entry_point}` itself: the main agent writes it.",
        _CODE_ONLY,
    ]
    return "\n".join(lines)


def solo_prompt(problem: CodingProblem) -> str:
    """The single-agent team: one agent writes the whole solution (the paper's single-model baseline)."""
    if pair_prompts.uses_pair_prompts(problem):
        return pair_prompts.solo_prompt(problem)
    lines = [
        "You are a Python programmer.",
        "",
        "Problem:",
        problem.prompt.rstrip(),
        "",
        f"Write the complete function `{problem.entry_point}` with the signature above. "
        "You may define helper functions too.",
        *_spec_lines(problem, "A useful helper function: "),
        _CODE_ONLY,
    ]
    return "\n".join(lines)


def main_prompt(problem: CodingProblem, protocol: str) -> str:
    if pair_prompts.uses_pair_prompts(problem):
        return pair_prompts.main_prompt(problem, protocol)
    if protocol == "sequential":
        helper_note = (
            f"A helper agent has written a function `{HELPER_NAME}`; its reply is shown below the problem. "
            f"Read what `{HELPER_NAME}` takes and returns, and call it where it helps."
        )
    else:
        helper_note = (
            f"A helper agent is writing, at the same time as you, a function `{HELPER_NAME}(...)` that returns "
            f"something useful for this problem; you will not see its code. Call `{HELPER_NAME}` where it helps."
        )
    lines = [
        "You are the main agent of a two-agent programming team.",
        "",
        "Problem:",
        problem.prompt.rstrip(),
        "",
        f"Write the complete function `{problem.entry_point}` with the signature above.",
        helper_note,
        *_spec_lines(problem, f"`{HELPER_NAME}` is specified as: "),
        f"`{HELPER_NAME}` is defined before your code runs: use its return value, and do not define "
        f"`{HELPER_NAME}` yourself (your definition would be ignored).",
        _CODE_ONLY,
    ]
    return "\n".join(lines)


def helper_spec(problem: CodingProblem) -> tuple[str, str] | None:
    """The problem's ``(signature, doc)`` of ``aux`` when its row names one, else None."""
    spec = problem.row.get("helper")
    if not isinstance(spec, Mapping):
        return None
    signature, doc = spec.get("signature"), spec.get("doc")
    if not isinstance(signature, str) or not isinstance(doc, str):
        return None
    return signature.strip(), doc.strip()


def _spec_lines(problem: CodingProblem, lead: str) -> list[str]:
    spec = helper_spec(problem)
    return [f"{lead}`{spec[0]}` {spec[1]}"] if spec else []


def _fact_lines(problem: CodingProblem) -> list[str]:
    """A fact only the helper is told (a rule, a table, a constant): main needs ``aux`` to get it right."""
    fact = problem.row.get("helper_fact")
    return [f"Only you know this (the main agent does not): {fact.strip()}"] if isinstance(fact, str) and fact.strip() else []


def _helper_task(problem: CodingProblem) -> str:
    spec = helper_spec(problem)
    if spec is None:
        return f"Write a helper function named `{HELPER_NAME}` that solves a useful part of this problem and returns its result."
    return f"Write the helper function `{spec[0]}` {spec[1]}"
