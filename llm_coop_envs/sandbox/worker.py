"""Worker: the host's handle on one warm interpreter (one bwrap sandbox or one subprocess)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import tempfile
import time

from llm_coop_envs.sandbox import _cgroup
from llm_coop_envs.sandbox.inside import _protocol, _reap, _trash
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.backend import CLEAN_ENV, LaunchPlan

_START_TIMEOUT_S = 30.0
# The warm interpreter enforces the run's deadline itself; the host waits this much longer
# before deciding the interpreter itself is stuck and killing the whole sandbox.
HOST_GRACE_S = 5.0


_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


class WorkerFailed(RuntimeError):
    """The warm interpreter died, hung, or answered nonsense; the worker is unusable."""


class Worker:
    def __init__(self, plan: LaunchPlan) -> None:
        self.plan = plan
        self._log = tempfile.TemporaryFile()
        self.cgroup = _cgroup.create()
        argv = _cgroup.argv_inside(self.cgroup, plan.argv) if self.cgroup else plan.argv
        # Its own session: the whole sandbox can be killed as one process group.
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, env=CLEAN_ENV, cwd="/",
                                     start_new_session=True, close_fds=True)
        self.preload_failed: list[str] = []
        self.isolation: tuple[str, ...] = ()  # what keeps its runs apart, from the handshake
        self.queue_bytes = _widen_pipe(self.proc.stdin.fileno())

    def handshake(self) -> None:
        """Waits for the warm interpreter to be ready (any thread may wait; only the start
        itself must happen on the pool's long-lived spawner thread)."""
        plan = self.plan
        try:
            _protocol.write_frame(self.proc.stdin.fileno(), plan.hello)
            ready = _protocol.read_frame(self.proc.stdout.fileno(), time.monotonic() + _START_TIMEOUT_S)
        except (OSError, _protocol.ChannelClosed) as exc:
            log = self._read_log()
            self.close()
            raise WorkerFailed(f"warm interpreter did not start ({exc}): {log}") from None
        self.preload_failed = ready.get("preload_failed", [])
        isolation = ready.get("isolation") or {}
        self.isolation = tuple(isolation.get("held", ()))
        missing = isolation.get("missing") or {}
        if missing:
            backends.warn_once(f"missing:{sorted(missing)}", (
                f"the {plan.backend} backend could not set up "
                + "; ".join(f"{name} ({why})" for name, why in sorted(missing.items()))
                + ": runs go on without it (results list what held in `isolation`); "
                "see docs/sandbox.md"))

    def _read_log(self) -> str:
        try:
            self._log.seek(0)
            return self._log.read()[-4000:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def run(self, request: dict, timeout_s: float) -> dict:
        """Sends one program; returns the facts the warm interpreter observed."""
        self.send(_protocol.encode(request))
        return self.receive(time.monotonic() + timeout_s + HOST_GRACE_S)

    def send(self, frame: bytes) -> None:
        """Queues one encoded request. The warm interpreter serves requests in order, so a batch
        may send the next one while the current one runs (see batch.py)."""
        try:
            _protocol.write_all(self.proc.stdin.fileno(), frame)
        except OSError as exc:
            raise WorkerFailed(f"warm interpreter failed: {exc}") from None

    def receive(self, deadline: float) -> dict:
        """The facts of the oldest request not yet answered."""
        try:
            return _protocol.read_frame(self.proc.stdout.fileno(), deadline)
        except (OSError, _protocol.ChannelClosed) as exc:
            raise WorkerFailed(f"warm interpreter failed: {exc}") from None

    def close(self) -> None:
        """Kills the whole sandbox (idempotent) and removes what it left on the host."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._log):
            try:
                stream.close()
            except OSError:
                pass
        if self.plan.hello.get("fresh_uids") and self.plan.scratch_dir:
            _kill_last_run(self.plan.scratch_dir)
        if self.plan.scratch_dir:
            _trash.remove_tree(self.plan.scratch_dir)
        if self.cgroup:
            _cgroup.remove(self.cgroup)


def _widen_pipe(fd: int) -> int:
    """Grows the request pipe so a batch can queue a request behind the running one; returns how
    many bytes a queued request may have (0: queue nothing) so that writing it never blocks."""
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass  # over the system's pipe-max-size: keep the default size
    try:
        return max(fcntl.fcntl(fd, _F_GETPIPE_SZ) - 4096, 0)
    except OSError:
        return 0


def _kill_last_run(scratch_dir: str) -> None:
    """Daemons of the last run can outlive a warm interpreter that died where it had no PID
    namespace: kill them by the run's uid, which the interpreter wrote down before starting it."""
    try:
        with open(os.path.join(scratch_dir, _protocol.RUN_UID_FILE)) as f:
            uid = int(f.read())
    except (OSError, ValueError):
        return
    if uid > 0:
        kill_uid(uid)


def kill_uid(uid: int) -> None:
    """Kills every process of a run uid (daemons a dead warm interpreter could not reap)."""
    _reap.kill_as(uid)
