"""The warm interpreter: started once per worker (inside bwrap, or as a plain subprocess), it
imports what programs commonly need, then forks one confined child per program.

Run as a script (`python -s -E -B _zygote.py`), so its siblings import as top-level modules and
the rest of the package (and its dependencies) is never loaded here. It talks to the host over
length-prefixed JSON frames on what were its stdin/stdout; it never runs untrusted code itself.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import os
import secrets
import shutil
import signal
import stat

import _confine
import _monitor
import _protocol
import _reap
import _runner
import _testcache

_PR_SET_PDEATHSIG = 1
_HARNESS_FAILURE = 70


# Resolved once, before any fork: a dlopen and a symbol lookup in every child would cost it
# page faults (copies of the warm interpreter's memory) for nothing.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _take_host_channel() -> tuple[int, int]:
    """Moves the host channel off fds 0/1 so that no stray print can corrupt it."""
    host_in, host_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    return host_in, host_out


def _preload(modules: list[str]) -> list[str]:
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    return failed


def _remove_tree(path: str) -> None:
    """rmtree that first gives back permissions a program may have taken away."""
    def retry(function, failed_path, _exc_info):
        try:
            os.chmod(os.path.dirname(failed_path), stat.S_IRWXU)
            os.chmod(failed_path, stat.S_IRWXU)
        except OSError:
            pass
        function(failed_path)
    shutil.rmtree(path, onerror=retry)


class Zygote:
    def __init__(self, hello: dict) -> None:
        self.mode = "namespace" if hello["pid_namespace"] else "plain"
        self.run_uid: int | None = hello.get("run_uid")
        self.scratch_root: str = hello["scratch_root"]
        self.nproc_base: int = hello.get("nproc_base", 0)
        self.runs = 0
        self.tests = _testcache.TestCache()
        self.pending: tuple[int, str] | None = None  # (child, scratch) still to be cleaned up

    def _scratch(self) -> str:
        self.runs += 1
        path = os.path.join(self.scratch_root, f"run-{self.runs}")
        os.mkdir(path, 0o700)
        if self.run_uid is not None:
            os.chown(path, self.run_uid, self.run_uid)
        return path

    def _child(self, request: dict, fds: dict[str, int], scratch: str) -> None:
        try:
            _confine.confine(request, fds, scratch, self.run_uid)
            _die_with_parent()  # after the uid change, which clears it
            _runner.run(request)
        except BaseException:
            os._exit(_HARNESS_FAILURE)
        os._exit(0)

    def serve(self, request: dict) -> dict:
        scratch = self._scratch()
        request["nonce"] = secrets.token_hex(16)
        request["nproc_base"] = self.nproc_base
        request["compiled"] = self.tests.lookup(request["tests"])
        pipes = {name: os.pipe() for name in ("report", "out", "err")}
        pid = os.fork()
        if pid == 0:
            for read_end, _ in pipes.values():
                os.close(read_end)
            self._child(request, {n: w for n, (_, w) in pipes.items()}, scratch)
        for _, write_end in pipes.values():
            os.close(write_end)
        facts = _monitor.watch(
            pid, {n: r for n, (r, _) in pipes.items()}, request["limits"], request["nonce"],
            len(request["tests"]), lambda child: _reap.signal_run(self.mode, self.run_uid, child))
        self.pending = (pid, scratch)
        return facts

    def clean_up(self) -> None:
        """After the reply: every process of the run already has SIGKILL pending and can run no
        more code; wait until they are all gone and remove the scratch directory."""
        if self.pending is not None:
            pid, scratch = self.pending
            _reap.kill_run(self.mode, self.run_uid, pid)
            _remove_tree(scratch)
            self.pending = None


def main() -> None:
    host_in, host_out = _take_host_channel()
    hello = _protocol.read_frame(host_in)
    if not hello["pid_namespace"]:
        _die_with_parent()
    failed = _preload(hello.get("preload", []))
    _reap.become_subreaper()
    zygote = Zygote(hello)
    # Everything imported so far is shared with every child; frozen objects are never scanned
    # by a child's garbage collector, so their pages are not copied on write.
    gc.collect()
    gc.freeze()
    _protocol.write_frame(host_out, {"ready": True, "pid": os.getpid(), "preload_failed": failed})
    while True:
        try:
            request = _protocol.read_frame(host_in)
        except _protocol.ChannelClosed:
            return
        _protocol.write_frame(host_out, zygote.serve(request))
        zygote.clean_up()


if __name__ == "__main__":
    main()
