"""ExecutionResult and TestOutcome: what one sandboxed run reports, decided by the trusted side."""

from __future__ import annotations

from dataclasses import dataclass, field

RUN_STATUSES = ("ok", "syntax_error", "error", "timeout", "crashed")
TEST_STATUSES = ("passed", "failed", "error", "timeout", "not_run")


@dataclass(frozen=True)
class TestOutcome:
    """One test snippet: "passed", "failed" (AssertionError), "error" (other exception),
    "timeout" or "not_run"."""

    __test__ = False  # not a pytest test class

    status: str
    error_type: str | None = None
    message: str | None = None
    fallback: bool = field(default=False, compare=False)
    """True when the judge could not split the snippet into calls and checks (its arguments
    were not plain data), so it ran guarded inside the sandbox instead (docs/sandbox.md)."""

    def __post_init__(self) -> None:
        if self.status not in TEST_STATUSES:
            raise ValueError(f"status={self.status!r}: use one of {TEST_STATUSES}")


@dataclass(frozen=True)
class ExecutionResult:
    """One program run: how loading went (`status`) and one TestOutcome per test snippet."""

    status: str
    tests: tuple[TestOutcome, ...] = ()
    error_type: str | None = None
    error_message: str | None = None
    error_line: int | None = None
    error_col: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    backend: str = field(default="", compare=False)
    isolation: tuple[str, ...] = field(default=(), compare=False)
    """What kept this run apart from the host and from other runs, among "file_view", "network",
    "pid_namespace", "run_uid" and "ipc" (docs/sandbox.md); empty when it never reached a sandbox."""

    def __post_init__(self) -> None:
        if self.status not in RUN_STATUSES:
            raise ValueError(f"status={self.status!r}: use one of {RUN_STATUSES}")

    @property
    def passed(self) -> int:
        return sum(t.status == "passed" for t in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def pass_fraction(self) -> float:
        return self.passed / self.total if self.tests else 0.0

    @property
    def all_passed(self) -> bool:
        return self.status == "ok" and bool(self.tests) and self.passed == self.total


def not_run(n: int) -> tuple[TestOutcome, ...]:
    return tuple(TestOutcome("not_run") for _ in range(n))


def failure(status: str, n_tests: int, error_type: str, message: str,
            duration_s: float = 0.0, backend: str = "") -> ExecutionResult:
    """A run that never reached its tests (rejected, sandbox failure, ...)."""
    return ExecutionResult(status=status, tests=not_run(n_tests), error_type=error_type,
                           error_message=message, duration_s=duration_s, backend=backend)
