"""The per-agent feedback text of one evaluation: short, factual, deterministic (no timings).

Feedback is made by the judge, never chosen by a program: it names Python's own exception types (a
program's own exception class is shown as "an exception of the program's own class"), and it never
repeats an exception's message, the program's output or a returned value, so no agent's code can
write into its partner's observation. A syntax error's offending line is shown only to the agent
that wrote it.

What it says about tests depends on the problem's tests (``llm_coop_envs.coding.public_tests``):

* ``"public"`` (``v1`` rules): failing **public** asserts are quoted; hidden tests are counted, with
  the error types of those that failed. A problem too small to split names each failing call and its
  error type, never an expected value.
* ``"silent"`` (``v2`` rules): hidden tests never speak. The feedback names failing **public** tests
  only (their asserts are written from the prompt), each with one of three fixed verdicts (wrong result,
  error, time limit), from a run of the public tests alone in a process that never ran a hidden test;
  it says nothing of hidden tests (no count, no kind, no call), never names an exception the program
  raised, and never lists an identifier an agent chose (only the prompt's ``aux``). The channels that
  remain: the public verdicts, and an episode that ends when solved (one bit per turn).
* ``"leaky"`` (``v0`` rules, or ``leaky_feedback=True`` to reproduce the MAGRPO reference code's level
  feedback): failing scoring asserts are quoted word for word, expected values included. The next turn
  is scored on those same asserts, so a policy can be paid for copying them: use it only to reproduce
  published numbers.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter

from llm_coop_envs.coding.prompts import HELPER_NAME
from llm_coop_envs.coding.reward import Verdict
from llm_coop_envs.coding.tests_split import TestCase

MAX_FAILURES_SHOWN = 3
MAX_LABEL_CHARS = 160
FEEDBACK_MODES = ("public", "silent", "leaky")
VERDICTS = {"failed": "wrong result", "timeout": "time limit"}
"""The three words of a public test's verdict under ``"silent"`` (anything else is "error")."""
BUILTIN_ERRORS = frozenset(name for name, value in vars(builtins).items()
                           if isinstance(value, type) and issubclass(value, BaseException))
OWN_CLASS = "an exception of the program's own class"


def agent_feedback(verdict: Verdict, mode: str = "public") -> dict[str, str]:
    return {
        "helper": "\n".join(_helper_lines(verdict) + _program_lines(verdict, "helper", mode)
                            + _cooperation_lines(verdict, "helper")),
        "main": "\n".join(_main_lines(verdict) + _program_lines(verdict, "main", mode)
                          + _cooperation_lines(verdict, "main")),
    }


def error_name(error_type: str | None) -> str:
    """A Python exception's name as the judge states it; any other class name is not repeated."""
    if not error_type:
        return "an error"
    return error_type if error_type in BUILTIN_ERRORS else OWN_CLASS


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
    if program.dropped_shadowing:
        lines.append("Your definitions of builtin or standard-library names that the program uses were ignored.")
    return lines


def _main_lines(verdict: Verdict) -> list[str]:
    program = verdict.program
    entry = verdict.problem.entry_point
    lines = [f"Main: `{entry}` found." if program.main_defined else
             f"Main: `{entry}` is missing; define it with the signature from the problem."]
    if program.dropped_from_main:
        names = ", ".join(f"`{n}`" for n in program.dropped_from_main)
        lines.append(f"Your top-level code that rebinds {names} was ignored: the helper agent's version is used.")
    return lines


def _program_lines(verdict: Verdict, role: str, mode: str) -> list[str]:
    program = verdict.program
    if not program.main_defined:
        return ["Tests: not run (no entry point)."]
    issue = program.syntax
    if issue is not None:
        where = f" in the {issue.owner}'s code" if issue.owner in ("helper", "main") else " in the prompt's code"
        if issue.owner != role:  # the partner's code is the partner's: say where, not what
            return [f"Syntax error{where}. Tests not run."]
        position = f" at line {issue.line}, column {issue.col}" if issue.line is not None else ""
        shown = f": `{issue.text}`" if issue.text else ""
        return [f"Syntax error{where}{position}: {issue.message}{shown}. Tests not run."]
    if mode == "silent":
        return _public_lines(verdict)
    result = verdict.result
    if result is None:
        return ["Tests: not run."]
    if result.status not in ("ok", "timeout"):
        return [f"The program failed to load ({error_name(result.error_type)}). Tests not run."]
    lines = _test_lines(verdict, mode)
    if result.status == "timeout":
        lines.append("The run was stopped at its time limit (an endless loop or very slow code?).")
    return lines


def _test_lines(verdict: Verdict, mode: str) -> list[str]:
    problem, outcomes = verdict.problem, verdict.result.tests
    scoring = list(zip(problem.tests, outcomes[: len(problem.tests)]))
    public = list(zip(problem.public_tests, outcomes[len(problem.tests):]))
    if mode == "leaky":
        return [f"Tests: {verdict.passed}/{len(problem.tests)} passed."] + _quoted(scoring)
    if not public:  # too few tests to split: every test scores and is named by its call only
        return [f"Tests: {verdict.passed}/{len(problem.tests)} passed."] + _named_calls(scoring, problem.entry_point)
    failed = Counter(_reason(o) for _, o in scoring if o.status != "passed")
    kinds = "; ".join(f"{kind} x{count}" for kind, count in failed.most_common())
    lines = [f"Hidden tests: {verdict.passed}/{len(problem.tests)} passed" + (f" (failed: {kinds})." if kinds else ".")]
    shown = sum(o.status == "passed" for _, o in public)
    return lines + [f"Public examples: {shown}/{len(public)} passed."] + _quoted(public)


def _public_lines(verdict: Verdict) -> list[str]:
    """``"silent"`` feedback: the public tests' own run, three verdict words, nothing hidden."""
    result, public = verdict.public_result, verdict.problem.public_tests
    if not public:
        return ["Public examples: none for this problem (hidden tests are not reported during an episode)."]
    if result is None:  # main did not run, or the episode ends with this turn (no one reads it)
        return ["Public examples: not run" + (" on the last turn." if verdict.result else ".")]
    if result.status not in ("ok", "timeout"):
        return ["The program failed to load (error). Public examples not run."]
    pairs = list(zip(public, result.tests))
    shown = sum(o.status == "passed" for _, o in pairs)
    lines = [f"Public examples: {shown}/{len(public)} passed."]
    lines += _failure_lines(pairs, lambda test: f"failed `{_short(test.label, MAX_LABEL_CHARS)}`", _verdict)
    if result.status == "timeout":
        lines.append("The run was stopped at its time limit (an endless loop or very slow code?).")
    return lines


def _verdict(outcome) -> str:
    return VERDICTS.get(outcome.status, "error")


def _quoted(pairs: list) -> list[str]:
    return _failure_lines(pairs, lambda test: f"failed `{_short(test.label, MAX_LABEL_CHARS)}`")


def _named_calls(pairs: list, entry_point: str) -> list[str]:
    return _failure_lines(pairs, lambda test: f"failed on `{_short(_call_text(test, entry_point), MAX_LABEL_CHARS)}`")


def _failure_lines(pairs: list, describe, reason=None) -> list[str]:
    """Up to ``MAX_FAILURES_SHOWN`` failed tests, each as ``describe(test)`` and its reason, then a count."""
    reason = reason or _reason
    failures = [(t, o) for t, o in pairs if o.status != "passed"]
    lines = [f"- {describe(t)} ({reason(o)})" for t, o in failures[:MAX_FAILURES_SHOWN]]
    if len(failures) > MAX_FAILURES_SHOWN:
        lines.append(f"- and {len(failures) - MAX_FAILURES_SHOWN} more failed.")
    return lines


def _call_text(test: TestCase, entry_point: str) -> str:
    """The first call of the entry point in an assert, without the expected side."""
    try:
        tree = ast.parse(test.label)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return f"{entry_point}(...)"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate":
            return ast.unparse(ast.Call(ast.Name(entry_point), node.args, node.keywords))
    return f"{entry_point}(...)"


def _reason(outcome) -> str:
    if outcome.status == "failed":
        return "wrong result"
    if outcome.status == "error":
        return error_name(outcome.error_type)
    if outcome.status == "timeout":
        return "stopped at its time limit"
    return outcome.status.replace("_", " ")


def _cooperation_lines(verdict: Verdict, role: str) -> list[str]:
    program, use = verdict.program, verdict.helper_use
    if not program.main_defined or program.syntax is not None or not program.helper_functions:
        return []
    called = ", ".join(f"`{n}`" for n in use.used)
    if not use.calls_helper:
        return ["Main's entry point does not call the helper's function." if role == "helper" else
                "Your entry point does not call the helper's function; call it and use its result."]
    if use.ignores_return:
        return [f"Main calls {called} but ignores its return value."]
    if use.thin_wrapper:
        return [f"Main only wraps {called}; it should add its own logic around the helper's result."]
    return [f"Main uses {called} and adds its own logic."]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
