"""The judgement of one coding program: one JSON-friendly mapping, one name per fact.

The same mapping is a reward function's ``context`` and the env's ``infos[agent]["details"]``; its
keys are listed once, in :mod:`llm_coop_envs.core.reward_fns` (the "Custom rewards" page).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from llm_coop_envs.coding.reward import Verdict
from llm_coop_envs.sandbox import ExecutionResult


def judgement(verdict: Verdict) -> Mapping[str, Any]:
    """The read-only mapping of ``verdict``: what the program was, how it ran, how it cooperates."""
    program, problem = verdict.program, verdict.problem
    return MappingProxyType({
        "task_id": problem.task_id,
        "problem": dict(problem.row),
        "entry_point": problem.entry_point,
        "rules": verdict.rules.name,
        "parse": {"helper": verdict.helper_parse.summary(), "main": verdict.main_parse.summary()},
        "program": program.source,
        "code": {"helper": program.helper_code, "main": program.main_code},
        "helper_functions": list(program.helper_functions),
        "main_defined": program.main_defined,
        "dropped_from_helper": list(program.dropped_from_helper),
        "dropped_from_main": list(program.dropped_from_main),
        "dropped_shadowing": list(program.dropped_shadowing),
        "syntax_error": _syntax_error(verdict),
        **_test_facts(verdict),
        "helper_use": {
            "calls_helper": verdict.helper_use.calls_helper,
            "thin_wrapper": verdict.helper_use.thin_wrapper,
            "ignores_return": verdict.helper_use.ignores_return,
            "used": list(verdict.helper_use.used),
        },
        "helper_dependence": None if verdict.dependence is None else verdict.dependence.as_details(),
    })


def _syntax_error(verdict: Verdict) -> dict[str, Any] | None:
    issue = verdict.program.syntax
    if issue is None:
        return None
    return {"message": issue.message, "owner": issue.owner, "line": issue.line, "col": issue.col,
            "program_line": issue.program_line}


def _test_facts(verdict: Verdict) -> dict[str, Any]:
    """The tests (labels, and outcomes when the program ran) and the sandbox run's summary."""
    problem, result = verdict.problem, verdict.result
    scoring = len(problem.tests)
    ran = [] if result is None else list(result.tests[:scoring]) + list(verdict.public_outcomes)
    outcomes = [
        {"test": t.label, "public": i >= scoring, "status": o.status, "error_type": o.error_type,
         "message": o.message, "fallback": o.fallback}
        for i, (t, o) in enumerate(zip(problem.tests_to_run, ran))
    ]
    return {
        "scoring_tests": [t.label for t in problem.tests],
        "public_tests": [t.label for t in problem.public_tests],
        "passed": verdict.passed,
        "total": scoring,
        "public_passed": sum(o["status"] == "passed" for o in outcomes[scoring:]),
        "public_total": len(problem.public_tests),
        "public_ran": bool(verdict.public_outcomes),  # v2 rules: not on an episode's last turn
        "tests": outcomes,
        "sandbox": None if result is None else _sandbox_summary(result),
    }


def _sandbox_summary(result: ExecutionResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "error_type": result.error_type,
        "error_message": result.error_message,
        "duration_s": round(result.duration_s, 4),
        "backend": result.backend,
        "stdout": result.stdout[:2000],
        "stderr": result.stderr[:2000],
    }
