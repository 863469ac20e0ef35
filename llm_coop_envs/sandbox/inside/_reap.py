"""Kill every process a run started, including daemons that left its session, and reap them.

The warm interpreter is a child subreaper, so orphans of a run become its children and nothing the
run started can escape `waitpid`. How to signal them depends on where we are:

* in our own PID namespace (bwrap): kill(-1) reaches every process of the namespace but us and
  its init, which is exactly the run;
* under a dedicated uid (root without bwrap): a helper that switched to that uid calls kill(-1),
  which reaches exactly the processes of that uid, atomically, even during a fork bomb;
* otherwise: walk /proc for our descendants and kill them, until none are left.
"""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_CHILD_SUBREAPER = 36


# Resolved at import (in the warm interpreter, before any fork): a run's process that becomes a
# subreaper (_isolated.py) then pays no dlopen.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def become_subreaper() -> None:
    _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap_exited() -> bool:
    """Reap exited children without blocking; True when we have no children left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _kill_namespace() -> None:
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_as(uid: int) -> None:
    """Kill every process of ``uid`` at once: a forked helper takes that uid and calls kill(-1)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        except BaseException:
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def _kill_descendants() -> None:
    me = os.getpid()
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = _parent_of(int(name))
            if parent is not None:
                parents[int(name)] = parent
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor != me and ancestor > 1:
            ancestor = parents.get(ancestor)
        if ancestor == me:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def signal_run(mode: str, run_uid: int | None, child: int) -> None:
    """One sweep of SIGKILL over the run. In the first two modes kill(-1) is atomic with respect
    to fork, so afterwards no process of the run can execute another instruction. (No killpg:
    the child may already be reaped and its group id reused by someone else.)"""
    if mode == "namespace":
        _kill_namespace()
    elif run_uid is not None:
        kill_as(run_uid)
    else:
        _kill_descendants()


def kill_run(mode: str, run_uid: int | None, child: int) -> None:
    """Returns only when no process of the run is left."""
    while True:
        signal_run(mode, run_uid, child)
        if reap_exited():
            return
        # Something is still dying (or was just forked): wait for one exit, then sweep again.
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
