"""run_tests: one program in the sandbox (run_tests_batch, for many, is in batch.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox import outcome
from llm_coop_envs.sandbox.config import SandboxConfig
from llm_coop_envs.sandbox.pool import get_pool
from llm_coop_envs.sandbox.result import ExecutionResult, failure
from llm_coop_envs.sandbox.worker import WorkerFailed

DEFAULT_CONFIG = SandboxConfig()
Job = tuple[str, Sequence[str], "str | None"]


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _as_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def reject(program: object, tests: Sequence[object], entry_point: object,
            config: SandboxConfig) -> ExecutionResult | None:
    """Inputs that are not worth a sandbox: wrong types or over the size limit."""
    n = len(tests)
    if _as_text(program) is None or not all(isinstance(t, str) for t in tests):
        return failure("error", n, "TypeError", "program and tests must be str")
    if entry_point is not None and not isinstance(entry_point, str):
        return failure("error", n, "TypeError", "entry_point must be a str or None")
    size = len(program) + sum(len(t) for t in tests)
    if size * 4 > config.max_program_bytes and _utf8_len(program, tests) > config.max_program_bytes:
        return failure("error", n, "ProgramTooLarge",
                       f"program and tests exceed max_program_bytes={config.max_program_bytes}")
    return None


def _utf8_len(program: str, tests: Sequence[str]) -> int:
    return sum(len(s.encode("utf-8", "surrogatepass")) for s in (program, *tests))


def build_request(program: str, tests: Sequence[str], entry_point: str | None,
             config: SandboxConfig) -> dict:
    return {"program": program, "tests": list(tests),
            "entry_point": entry_point, "limits": config.limits()}


def _run_on_pool(pool, request: dict, timeout_s: float) -> dict:
    worker = pool.acquire()
    healthy = False
    try:
        facts = worker.run(request, timeout_s)
        healthy = True
        return facts
    finally:
        pool.release(worker, healthy)


def run_tests(program: str, tests: Sequence[str], entry_point: str | None = None,
              config: SandboxConfig | None = None, *, _pool_size: int | None = None) -> ExecutionResult:
    """Runs `program`, then each test snippet on its own, in the sandbox; never raises for any
    program text. See docs/sandbox.md for the isolation and the result semantics."""
    config = config or DEFAULT_CONFIG
    tests = list(tests) if not isinstance(tests, str) else [tests]
    rejected = reject(program, tests, entry_point, config)
    if rejected is not None:
        return rejected
    backend = backends.resolve(config.backend)
    pool = get_pool(backend, config.preload_modules, config.max_file_mb * 2 + 8,
                    max(_pool_size or 0, cores()))
    started = time.monotonic()
    request = build_request(program, tests, entry_point, config)
    try:
        facts = _run_on_pool(pool, request, config.timeout_s)
    except WorkerFailed as exc:
        return failure("crashed", len(tests), "SandboxError", str(exc),
                       time.monotonic() - started, backend)
    return outcome.build(facts, len(tests), config.timeout_s, config.test_timeout_s, backend)
