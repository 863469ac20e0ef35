"""The per-agent feedback text of one evaluation: short, factual, deterministic (no timings)."""

from __future__ import annotations

from llm_coop_envs.coding.prompts import HELPER_NAME
from llm_coop_envs.coding.reward import Verdict

MAX_FAILURES_SHOWN = 3
MAX_LABEL_CHARS = 160
MAX_MESSAGE_CHARS = 160


def agent_feedback(verdict: Verdict) -> dict[str, str]:
    shared = _program_lines(verdict)
    return {
        "helper": "\n".join(_helper_lines(verdict) + shared + _cooperation_lines(verdict, "helper")),
        "main": "\n".join(_main_lines(verdict) + shared + _cooperation_lines(verdict, "main")),
    }


def _helper_lines(verdict: Verdict) -> list[str]:
    program = verdict.program
    names = ", ".join(f"`{n}`" for n in program.helper_functions)
    if not program.helper_functions:
        lines = [f"Helper: no function found in your reply; define `{HELPER_NAME}(...)` returning a value."]
    elif not program.helper_returns:
        lines = [f"Helper: {names} found, but no function of yours returns a value."]
    else:
        lines = [f"Helper: {names} found."]
    if program.dropped_from_helper:
        lines.append(f"Your `{verdict.problem.entry_point}` was ignored: the main agent writes it.")
    return lines


def _main_lines(verdict: Verdict) -> list[str]:
    program = verdict.program
    entry = verdict.problem.entry_point
    lines = [f"Main: `{entry}` found." if program.main_defined else
             f"Main: `{entry}` is missing; define it with the signature from the problem."]
    if program.dropped_from_main:
        names = ", ".join(f"`{n}`" for n in program.dropped_from_main)
        lines.append(f"Your definition of {names} was ignored: the helper agent's version is used.")
    return lines


def _program_lines(verdict: Verdict) -> list[str]:
    program = verdict.program
    if not program.main_defined:
        return ["Tests: not run (no entry point)."]
    issue = program.syntax
    if issue is not None:
        where = f" in the {issue.owner}'s code" if issue.owner in ("helper", "main") else " in the prompt's code"
        position = f" at line {issue.line}, column {issue.col}" if issue.line is not None else ""
        shown = f": `{issue.text}`" if issue.text else ""
        return [f"Syntax error{where}{position}: {issue.message}{shown}. Tests not run."]
    result = verdict.result
    if result is None:
        return ["Tests: not run."]
    if result.status not in ("ok", "timeout"):
        message = _short(result.error_message or "", MAX_MESSAGE_CHARS)
        return [f"The program failed to load ({result.error_type}: {message}). Tests not run."]
    lines = [f"Tests: {result.passed}/{len(verdict.problem.tests)} passed."]
    if result.status == "timeout":
        lines.append("The run was stopped at its time limit (an endless loop or very slow code?).")
    failures = [(t, o) for t, o in zip(verdict.problem.tests, result.tests) if o.status != "passed"]
    for test, outcome in failures[:MAX_FAILURES_SHOWN]:
        reason = outcome.error_type or outcome.status
        if outcome.message:
            reason += f": {_short(outcome.message, MAX_MESSAGE_CHARS)}"
        lines.append(f"- failed `{_short(test.label, MAX_LABEL_CHARS)}` ({reason})")
    if len(failures) > MAX_FAILURES_SHOWN:
        lines.append(f"- and {len(failures) - MAX_FAILURES_SHOWN} more failed.")
    return lines


def _cooperation_lines(verdict: Verdict, role: str) -> list[str]:
    program, use = verdict.program, verdict.helper_use
    if not program.main_defined or program.syntax is not None or not program.helper_functions:
        return []
    called = ", ".join(f"`{n}`" for n in use.used)
    if not use.calls_helper:
        return ["Main does not call the helper's function." if role == "helper" else
                "You do not call the helper's function; call it and use its result."]
    if use.ignores_return:
        return [f"Main calls {called} but ignores its return value."]
    if use.thin_wrapper:
        return [f"Main only wraps {called}; it should add its own logic around the helper's result."]
    return [f"Main uses {called} and adds its own logic."]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
