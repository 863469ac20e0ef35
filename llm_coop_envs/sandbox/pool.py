"""A thread-safe pool of warm interpreters, one pool per launch configuration, shut at exit."""

from __future__ import annotations

import atexit
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.worker import Worker


class Pool:
    """Hands out idle workers; starts new ones (up to `size`) when all are busy."""

    def __init__(self, backend: str, preload: tuple[str, ...], max_file_mb: int, size: int) -> None:
        self.backend, self.preload, self.max_file_mb = backend, preload, max_file_mb
        self.size = size
        self._idle: list[Worker] = []
        self._alive = 0
        self._closed = False
        self._cond = threading.Condition()
        # bwrap --die-with-parent (and PR_SET_PDEATHSIG) fire when the *thread* that started the
        # sandbox exits, so sandboxes are started from one long-lived thread, never from callers'.
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")

    def grow(self, size: int) -> None:
        with self._cond:
            if size > self.size:
                self.size = size
                self._cond.notify_all()

    def acquire(self) -> Worker:
        with self._cond:
            while not self._idle and self._alive >= self.size and not self._closed:
                self._cond.wait()
            if self._closed:
                raise RuntimeError("the sandbox pool is shut down")
            if self._idle:
                return self._idle.pop()
            self._alive += 1
        try:
            plan = backends.plan(self.backend, self.preload, self.max_file_mb)
            worker = self._spawner.submit(Worker, plan).result()
            worker.handshake()  # in the caller's thread: workers start in parallel
            return worker
        except BaseException:
            self._forget()
            raise

    def release(self, worker: Worker, healthy: bool) -> None:
        if healthy and not self._closed:
            with self._cond:
                self._idle.append(worker)
                self._cond.notify()
            return
        worker.close()
        self._forget()

    def _forget(self) -> None:
        with self._cond:
            self._alive -= 1
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:
            worker.close()
        self._spawner.shutdown(wait=False)


_pools: dict[tuple, Pool] = {}
_pools_lock = threading.Lock()
_owner_pid = os.getpid()


def get_pool(backend: str, preload: tuple[str, ...], max_file_mb: int, size: int) -> Pool:
    """The shared pool for this launch configuration (a forked host starts its own pools); its
    warm interpreters give each run a scratch folder of `max_file_mb`."""
    global _owner_pid
    key = (backend, preload, max_file_mb)
    with _pools_lock:
        if os.getpid() != _owner_pid:  # inherited through fork: those workers belong to the parent
            _pools.clear()
            _owner_pid = os.getpid()
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = Pool(backend, preload, max_file_mb, size)
    pool.grow(size)
    return pool


def shutdown() -> None:
    """Stops every warm interpreter of this process (also runs at interpreter exit)."""
    with _pools_lock:
        pools = list(_pools.values()) if os.getpid() == _owner_pid else []
        _pools.clear()
    for pool in pools:
        pool.close()


atexit.register(shutdown)
