"""run_tests_batch: many programs over a few warm interpreters, each kept busy back to back.

Each batch thread holds one warm interpreter for the whole batch and keeps QUEUE_DEPTH requests
in its pipe: while one program runs, the next one is already waiting, so the interpreter starts it
the moment it has cleaned up after the last one instead of idling for a round trip to this
process (read the reply, build the result, encode the next request, wake up). A batch of no more
jobs than threads queues one request on each instead, so that they run side by side rather than
both on the first thread's interpreter (the counterfactual runs of one step are two requests).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from llm_coop_envs.sandbox import outcome
from llm_coop_envs.sandbox import api
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.config import SandboxConfig
from llm_coop_envs.sandbox.pool import Pool, get_pool
from llm_coop_envs.sandbox.result import ExecutionResult, failure
from llm_coop_envs.sandbox.worker import HOST_GRACE_S, Worker, WorkerFailed

QUEUE_DEPTH = 2
OnResult = Callable[[int, ExecutionResult], None]


@dataclass
class Request:
    """One job's request, ready for a warm interpreter: its frames, how long it may run, and how
    its facts (or the crash of the interpreter that ran it) become the job's result."""

    frame: bytes
    timeout_s: float
    build: Callable[[dict, tuple[str, ...]], Any]
    """(facts, the worker's isolation) -> the job's result."""
    crashed: Callable[[str], Any]
    """(why the warm interpreter failed) -> the job's result."""


Prepare = Callable[[Any], "Request | Any"]
"""A job -> its Request, or its result when it needs no sandbox (rejected up front)."""


@dataclass
class _Item:
    index: int
    request: Request
    sent: float = 0.0

    @property
    def frame(self) -> bytes:
        return self.request.frame


class _Batch:
    """Shared state of one batch call: the jobs not yet taken and the results."""

    def __init__(self, jobs: list, prepare: Prepare, pool: Pool,
                 on_result: Callable[[int, Any], None] | None, lanes: int) -> None:
        self.jobs, self.prepare, self.pool = jobs, prepare, pool
        self.on_result = on_result
        # Requests queued on one warm interpreter. With no more jobs than lanes, one each rather than
        # QUEUE_DEPTH on the first lane's interpreter (which would take them before the others
        # start): they run side by side.
        self.depth = min(QUEUE_DEPTH, -(-len(jobs) // lanes))
        self.results: list[Any] = [None] * len(jobs)
        self._next = 0
        self._lock = threading.Lock()

    def finish(self, index: int, result: Any) -> None:
        self.results[index] = result
        if self.on_result is not None:
            self.on_result(index, result)

    def take(self) -> _Item | None:
        """The next job that needs a sandbox (jobs rejected up front are finished here)."""
        while True:
            with self._lock:
                if self._next >= len(self.jobs):
                    return None
                index, self._next = self._next, self._next + 1
            prepared = self.prepare(self.jobs[index])
            if not isinstance(prepared, Request):
                self.finish(index, prepared)
                continue
            return _Item(index, prepared)


def _test_job(config: SandboxConfig, backend: str) -> Prepare:
    """run_tests_batch's jobs: (program, tests, entry_point[, context])."""
    def prepare(job: api.Job) -> Request | ExecutionResult:
        program, tests, entry_point, *rest = job
        context = rest[0] if rest else ""
        tests = [tests] if isinstance(tests, str) else list(tests)
        rejected = api.reject(program, tests, entry_point, config, context)
        if rejected is not None:
            return rejected
        n_tests = len(tests)
        return Request(
            api.encode_request(program, tests, entry_point, config, context), config.timeout_s,
            lambda facts, isolation: outcome.build(facts, n_tests, config.timeout_s,
                                                   config.test_timeout_s, backend, isolation),
            lambda why: failure("crashed", n_tests, "SandboxError", why, backend=backend))
    return prepare


class _Lane:
    """One batch thread: one warm interpreter at a time, up to QUEUE_DEPTH requests queued on it."""

    def __init__(self, batch: _Batch) -> None:
        self.batch = batch
        self.in_flight: deque[_Item] = deque()
        self.retry: deque[_Item] = deque()  # queued behind a run whose interpreter died

    def run(self) -> None:
        while True:
            item = self._next_item()
            if item is None:
                return
            self.retry.appendleft(item)
            try:
                worker = self.batch.pool.acquire()
            except WorkerFailed as exc:  # could not start one: the next job reports it
                self._crashed(self.retry.popleft(), exc)
                continue
            healthy = False
            try:
                self._pump(worker)
                healthy = True
            except WorkerFailed as exc:
                # The oldest request was the one running; those queued behind it never started.
                self._crashed(self.in_flight.popleft(), exc)
                self.retry.extendleft(reversed(self.in_flight))
                self.in_flight.clear()
            finally:
                self.batch.pool.release(worker, healthy)

    def _next_item(self) -> _Item | None:
        return self.retry.popleft() if self.retry else self.batch.take()

    def _pump(self, worker: Worker) -> None:
        answered = time.monotonic()
        while True:
            self._fill(worker)
            if not self.in_flight:
                return
            # The oldest request starts once the one before it was answered (or when sent).
            oldest = self.in_flight[0]
            deadline = max(answered, oldest.sent) + oldest.request.timeout_s + HOST_GRACE_S
            facts = worker.receive(deadline)
            answered = time.monotonic()
            item = self.in_flight.popleft()
            self.batch.finish(item.index, item.request.build(facts, worker.isolation))

    def _fill(self, worker: Worker) -> None:
        while len(self.in_flight) < self.batch.depth:
            item = self._next_item()
            if item is None:
                return
            # A queued request must fit in the pipe: if writing it blocked, we could not read
            # the reply the interpreter may be blocked writing to us.
            if self.in_flight and len(item.frame) > worker.queue_bytes:
                self.retry.appendleft(item)
                return
            worker.send(item.frame)
            item.sent = time.monotonic()
            self.in_flight.append(item)

    def _crashed(self, item: _Item, exc: Exception) -> None:
        self.batch.finish(item.index, item.request.crashed(str(exc)))


def run_tests_batch(jobs: Sequence[api.Job], config: SandboxConfig | None = None,
                    workers: int | None = None, on_result: OnResult | None = None,
                    ) -> list[ExecutionResult]:
    """run_tests over many (program, tests, entry_point[, context]) jobs on `workers` warm interpreters
    (default: all cores); results come back in the order of `jobs`. `on_result(index, result)`
    is called as each job finishes (e.g. to advance a progress bar)."""
    config = config or api.DEFAULT_CONFIG
    backend = backends.resolve(config.backend)
    return run_batch(list(jobs), _test_job(config, backend), config, workers, on_result)


def run_batch(jobs: list, prepare: Prepare, config: SandboxConfig, workers: int | None = None,
              on_result: Callable[[int, Any], None] | None = None) -> list:
    """Any kind of job (`prepare` makes its request) over `workers` warm interpreters of
    `config`'s pool, results in the order of `jobs`."""
    workers = workers or api.cores()
    if workers < 1:
        raise ValueError(f"workers={workers}: use at least 1")
    if not jobs:
        return []
    pool = get_pool(backends.resolve(config.backend), config.preload_modules, config.max_file_mb,
                    max(workers, api.cores()))
    lanes = min(workers, len(jobs))
    batch = _Batch(jobs, prepare, pool, on_result, lanes)
    with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="sandbox-batch") as executor:
        for future in [executor.submit(_Lane(batch).run) for _ in range(lanes)]:
            future.result()
    return batch.results  # type: ignore[return-value]
