"""Host-side observers for the hostile-program tests: processes, files, network."""

from __future__ import annotations

import os
import socket
import threading
import time

from llm_coop_envs.sandbox import pool as pools


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, parent, ...), or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2:].split()


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat(int(name))
        if fields is not None:
            tree.setdefault(int(fields[1]), []).append(int(name))
    return tree


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    found, stack = [], list(tree.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(tree.get(child, []))
    return found


def _next_run(forking_side: int, tree: dict[int, list[int]]) -> int | None:
    """The child that the forking side started for the next request, waiting for it (confined,
    no program yet): named "next-run", with no children, and forked after the last run was swept,
    so the newest of such. A run's process that took the name too is older, and counts."""
    waiting = [p for p in tree.get(forking_side, []) if _comm(p) == "next-run" and not tree.get(p)]
    return max(waiting, key=_started, default=None)


def _started(pid: int) -> tuple[int, int]:
    """(start time in clock ticks since boot, pid): pids grow within a tick."""
    fields = _stat(pid)
    return (0 if fields is None else int(fields[19])), pid


def _is_zombie_or_gone(pid: int) -> bool:
    fields = _stat(pid)
    return fields is None or fields[0] == b"Z"


def run_processes(wait_s: float = 2.0) -> list[int]:
    """Processes started by sandboxed runs that are still alive: descendants of the forking
    sides of the warm interpreters of this process's pools (all of a run's orphans are
    re-parented there).

    A run's processes already have SIGKILL pending when run_tests returns and are reaped right
    after the reply; a big address space takes a moment to tear down, so poll for `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        leftovers, settled = _run_processes_now()
        if (not leftovers and settled) or time.monotonic() > deadline:
            return leftovers
        time.sleep(0.02)


def next_runs_forked() -> bool:
    """Whether every forking side has forked its next run's child: the warm interpreters are idle."""
    return _run_processes_now()[1]


def _run_processes_now() -> tuple[list[int], bool]:
    """(live processes of runs, whether every forking side has forked its next run's child yet:
    until then a leftover that took that child's name could pass for it)."""
    tree = _children()
    leftovers: list[int] = []
    settled = True
    for pool in list(pools._pools.values()):
        for worker in list(pool._idle):
            judge = worker.proc.pid
            while _comm(judge) == "bwrap" and tree.get(judge):
                judge = tree[judge][0]
            # The judge's one child is the warm interpreter's forking side, the parent (and
            # subreaper) of every run.
            for forking_side in tree.get(judge, []):
                waiting = _next_run(forking_side, tree)
                settled = settled and waiting is not None
                leftovers += [p for p in _descendants(forking_side, tree)
                              if p != waiting and not _is_zombie_or_gone(p)]
    return leftovers, settled


def marked_processes(marker: str, wait_s: float = 2.0) -> list[int]:
    """Any live process on the machine whose command line carries `marker` (polled like
    run_processes)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = _marked_now(marker)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def _marked_now(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read() and not _is_zombie_or_gone(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


class Listener:
    """A TCP server on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()
