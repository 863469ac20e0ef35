"""run_tests: one program in the sandbox (run_tests_batch, for many, is in batch.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from llm_coop_envs.sandbox.inside import _compiled, _protocol
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox import outcome
from llm_coop_envs.sandbox.config import SandboxConfig
from llm_coop_envs.sandbox.pool import get_pool
from llm_coop_envs.sandbox.result import ExecutionResult, failure
from llm_coop_envs.sandbox.worker import HOST_GRACE_S, WorkerFailed

DEFAULT_CONFIG = SandboxConfig()
Job = tuple  # (program, tests, entry_point) or (program, tests, entry_point, context)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _as_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def reject(program: object, tests: Sequence[object], entry_point: object,
            config: SandboxConfig, context: object = "") -> ExecutionResult | None:
    """Inputs that are not worth a sandbox: wrong types or over the size limit."""
    n = len(tests)
    if _as_text(program) is None or not all(isinstance(t, str) for t in tests):
        return failure("error", n, "TypeError", "program and tests must be str")
    if _as_text(context) is None:
        return failure("error", n, "TypeError", "context must be a str")
    if entry_point is not None and not isinstance(entry_point, str):
        return failure("error", n, "TypeError", "entry_point must be a str or None")
    size = len(program) + sum(len(t) for t in tests)
    if size * 4 > config.max_program_bytes and _utf8_len(program, tests) > config.max_program_bytes:
        return failure("error", n, "ProgramTooLarge",
                       f"program and tests exceed max_program_bytes={config.max_program_bytes}")
    return None


def _utf8_len(program: str, tests: Sequence[str]) -> int:
    return sum(len(s.encode("utf-8", "surrogatepass")) for s in (program, *tests))


def encode_request(program: str, tests: Sequence[str], entry_point: str | None,
                   config: SandboxConfig, context: str = "") -> bytes:
    """Two frames: what the untrusted run gets (the program), then what only the judge reads
    (the tests, compiled once per process by _compiled.py, and the trusted context); see
    _zygote.py."""
    run = {"program": program, "entry_point": entry_point, "limits": config.limits()}
    tests = list(tests)
    return _protocol.encode(run) + _protocol.encode(
        {"tests": tests, "context": context, "compiled": _compiled.pack_suite(tests)})


def _run_on_pool(pool, frames: bytes, timeout_s: float) -> tuple[dict, tuple[str, ...]]:
    """The facts of one request, and the isolation of the worker that ran it."""
    worker = pool.acquire()
    healthy = False
    try:
        worker.send(frames)
        facts = worker.receive(time.monotonic() + timeout_s + HOST_GRACE_S)
        healthy = True
        return facts, worker.isolation
    finally:
        pool.release(worker, healthy)


def run_tests(program: str, tests: Sequence[str], entry_point: str | None = None,
              config: SandboxConfig | None = None, *, context: str = "",
              _pool_size: int | None = None) -> ExecutionResult:
    """Runs `program` in the sandbox, then judges each test snippet on its own outside it: the
    snippet runs in the trusted judge with `context` (trusted code, e.g. the prompt's imports and
    helper functions), and its calls of `candidate` (the entry point) or of other names of the
    program go to the sandbox as plain data. Never raises for any program text. See
    docs/sandbox.md for the isolation and the result semantics."""
    config = config or DEFAULT_CONFIG
    tests = list(tests) if not isinstance(tests, str) else [tests]
    rejected = reject(program, tests, entry_point, config, context)
    if rejected is not None:
        return rejected
    backend = backends.resolve(config.backend)
    pool = get_pool(backend, config.preload_modules, config.max_file_mb,
                    max(_pool_size or 0, cores()))
    started = time.monotonic()
    frames = encode_request(program, tests, entry_point, config, context)
    try:
        facts, isolation = _run_on_pool(pool, frames, config.timeout_s)
    except WorkerFailed as exc:
        return failure("crashed", len(tests), "SandboxError", str(exc),
                       time.monotonic() - started, backend)
    return outcome.build(facts, len(tests), config.timeout_s, config.test_timeout_s, backend,
                         isolation)
