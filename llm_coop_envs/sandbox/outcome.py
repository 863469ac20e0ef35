"""Turning what the monitor observed into an ExecutionResult (trusted side, host process)."""

from __future__ import annotations

from llm_coop_envs.sandbox.inside import _codec
from llm_coop_envs.sandbox.result import ExecutionResult, TestOutcome, not_run
from llm_coop_envs.sandbox.text import safe_text

_TEST_STATUSES = ("passed", "failed", "error", "timeout")


def _str(value: object, limit: int = _codec.MAX_MESSAGE) -> str | None:
    return safe_text(value, limit) if isinstance(value, str) else None


def _type(value: object) -> str | None:
    """An exception's type name: a clean identifier (_codec.type_name) whatever the run sent."""
    return None if value is None else _codec.type_name(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _verdict(fields: object) -> TestOutcome:
    if not isinstance(fields, dict) or fields.get("status") not in _TEST_STATUSES:
        return TestOutcome("error", "SandboxError", "malformed test report")
    return TestOutcome(fields["status"], _type(fields.get("etype")), _str(fields.get("msg")),
                       fallback=fields.get("fallback") is True)


def _death(facts: dict) -> tuple[str, str]:
    """Why the run stopped early, as (error_type, message)."""
    if facts.get("tampered"):
        return "ReportTampered", f"the run broke the judge's call protocol: {facts['tampered']}"
    exit_info = facts.get("exit") or {}
    if "signal" in exit_info:
        return "Killed", f"the run was killed by {exit_info['signal']}"
    code = exit_info.get("code")
    return "EarlyExit", f"the run exited (status {code}) before its tests finished"


def _tests(facts: dict, n_tests: int, running_status: TestOutcome) -> tuple[TestOutcome, ...]:
    done = [_verdict(v) for v in (facts.get("tests") or [])[:n_tests]]
    if len(done) < n_tests and facts.get("running") == len(done):
        done.append(running_status)
    return tuple(done) + not_run(n_tests - len(done))


def build(facts: dict, n_tests: int, timeout_s: float, test_timeout_s: float,
          backend: str, isolation: tuple[str, ...] = ()) -> ExecutionResult:
    common = {"stdout": _str(facts.get("stdout"), 1 << 30) or "",
              "stderr": _str(facts.get("stderr"), 1 << 30) or "",
              "duration_s": float(facts.get("duration_s") or 0.0), "backend": backend,
              "isolation": isolation}
    setup = facts.get("setup") if isinstance(facts.get("setup"), dict) else None
    timed_out = facts.get("timed_out")
    if setup is None or setup.get("status") not in ("ok", "syntax_error", "error"):
        if timed_out:
            return ExecutionResult("timeout", not_run(n_tests), "TimeoutError",
                                   f"the program did not finish loading within {timeout_s:g} s", **common)
        etype, message = _death(facts)
        return ExecutionResult("crashed", not_run(n_tests), etype, message, **common)
    if setup["status"] != "ok":
        return ExecutionResult(setup["status"], not_run(n_tests), _codec.type_name(setup.get("etype")),
                               _str(setup.get("msg")), _int(setup.get("line")), _int(setup.get("col")),
                               **common)
    bind = facts.get("bind")
    if isinstance(bind, dict):
        return ExecutionResult("error", not_run(n_tests), _codec.type_name(bind.get("etype")),
                               _str(bind.get("msg")), **common)
    return _after_setup(facts, n_tests, timeout_s, test_timeout_s, common)


def _after_setup(facts: dict, n_tests: int, timeout_s: float, test_timeout_s: float,
                 common: dict) -> ExecutionResult:
    timed_out = facts.get("timed_out")
    if facts.get("done") and not facts.get("tampered"):
        return ExecutionResult("ok", _tests(facts, n_tests, TestOutcome("not_run")), **common)
    if timed_out:
        limit = test_timeout_s if timed_out == "test" else timeout_s
        message = f"{'test' if timed_out == 'test' else 'run'} exceeded {limit:g} s"
        tests = _tests(facts, n_tests, TestOutcome("timeout", "TimeoutError", message))
        return ExecutionResult("timeout", tests, "TimeoutError", message, **common)
    verdicts = facts.get("tests") or []
    last = verdicts[-1] if verdicts and not facts.get("tampered") else None
    if isinstance(last, dict) and last.get("etype") == "SystemExit":
        return ExecutionResult("error", _tests(facts, n_tests, TestOutcome("not_run")), "SystemExit",
                               f"the program exited during test {len(verdicts) - 1}", **common)
    etype, message = _death(facts)
    tests = _tests(facts, n_tests, TestOutcome("error", etype, message))
    if facts.get("tampered"):  # nothing it reported can be believed
        tests = (TestOutcome("error", etype, message),) * n_tests
    return ExecutionResult("crashed", tests, etype, message, **common)
