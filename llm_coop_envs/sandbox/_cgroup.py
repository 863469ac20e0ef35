"""CPU fairness between concurrent runs: each warm interpreter (which runs one program at a time)
gets a CPU cgroup of its own, where the host lets us create one.

The kernel shares CPU time between sibling cgroups equally, whatever the number of processes in
each, so a run that starts many busy processes takes no more than its worker's share from a
sibling. Only cgroup v1's `cpu` hierarchy is used (a v2 host would need its controllers delegated
to us); where it is missing or read-only, a run is bounded by RLIMIT_CPU per process, RLIMIT_NPROC
and the wall-clock deadline instead (docs/sandbox.md).
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import time

_V1_CPU = "/sys/fs/cgroup/cpu"
_counter = itertools.count()


@functools.lru_cache(maxsize=1)
def _parent() -> str | None:
    """Our own cgroup in the v1 cpu hierarchy, if we may create cgroups in it."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if "cpu" in controllers.split(","):
                    parent = os.path.join(_V1_CPU, path.lstrip("/"))
                    return parent if os.access(parent, os.W_OK) else None
    except (OSError, ValueError):
        pass
    return None


def create() -> str | None:
    """A fresh cgroup for one warm interpreter; its cgroup.procs file, or None if unavailable."""
    parent = _parent()
    if parent is None:
        return None
    path = os.path.join(parent, f"llm-coop-sandbox-{os.getpid()}-{next(_counter)}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    return os.path.join(path, "cgroup.procs")


def argv_inside(procs: str, argv: list[str]) -> list[str]:
    """`argv`, started from a shell that first moves itself into the cgroup (before anything of
    the sandbox exists, so everything it starts is inside)."""
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs] + argv


def remove(procs: str) -> None:
    """Kills whatever is still in the cgroup (a sandbox's processes die a moment after its
    outer process) and removes it; left in place if that takes over a second."""
    for _ in range(100):
        try:
            with open(procs) as f:
                pids = [int(line) for line in f if line.strip()]
            if not pids:
                os.rmdir(os.path.dirname(procs))
                return
        except (OSError, ValueError):
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
