"""Confinement of a forked child: everything that must happen before the first untrusted byte runs.

Runs in the warm interpreter's fork, before the program; nothing here may be reachable by it
afterwards (it is all done by the time untrusted code runs).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading

from _runner import REPORT_FD


def _wire_fds(fds: dict[str, int]) -> None:
    """stdin from /dev/null, stdout/stderr to the capture pipes, the report pipe on fd 3, and
    nothing else open: the host channel of the warm interpreter must not be reachable."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(fds["out"], 1)
    os.dup2(fds["err"], 2)
    os.dup2(fds["report"], REPORT_FD)
    os.closerange(REPORT_FD + 1, 1 << 16)


def _set_limits(limits: dict, nproc_base: int) -> None:
    mb = 1024 * 1024
    pairs = [
        (resource.RLIMIT_AS, limits["memory_mb"] * mb),
        (resource.RLIMIT_CPU, limits["cpu_s"]),
        (resource.RLIMIT_FSIZE, limits["max_file_mb"] * mb),
        (resource.RLIMIT_NOFILE, limits["max_open_files"]),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, nproc_base + limits["max_processes"]),
    ]
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def _drop_privileges(uid: int | None) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _disable_trace_hooks() -> None:
    """A trace function can jump over an assert (frame.f_lineno = ...); take the tool away."""
    def refuse(*args, **kwargs):
        raise PermissionError("tracing and profiling hooks are disabled in the sandbox")
    sys.settrace(None)
    sys.setprofile(None)
    sys.settrace = sys.setprofile = refuse
    threading.settrace = threading.setprofile = refuse


def confine(request: dict, fds: dict[str, int], scratch: str, uid: int | None) -> None:
    """Everything that must happen before the first untrusted byte runs."""
    os.setsid()
    _wire_fds(fds)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"HOME": scratch, "TMPDIR": scratch, "PATH": "/usr/local/bin:/usr/bin:/bin",
                       "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"})
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    _drop_privileges(uid)
    _set_limits(request["limits"], request.get("nproc_base", 0))
    _disable_trace_hooks()
