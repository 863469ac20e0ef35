"""The warm interpreter: started once per worker (inside bwrap, or as a plain subprocess), it
imports what programs commonly need, then forks one confined child per program.

Run as a script (`python -s -E -B _zygote.py`), so its siblings import as top-level modules and
the rest of the package (and its dependencies) is never loaded here. It talks to the host over
length-prefixed JSON frames on what were its stdin/stdout; it never runs untrusted code itself.

A request is two frames: the program (read here), then its tests (read by the judge). Per request
the warm interpreter forks the judge (_judge.py), which forks the run's child before it reads the
tests, so neither this process nor any child forked from it ever holds a test.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import os
import shutil
import signal
import socket
import stat

import _judge
import _protocol
import _reap
import _runner

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_HARNESS_FAILURE = 70


# Resolved once, before any fork: a dlopen and a symbol lookup in every child would cost it
# page faults (copies of the warm interpreter's memory) for nothing.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _not_dumpable() -> None:
    """No process of the same uid may ptrace this one or read its memory (/proc/PID/mem, fds):
    on the subprocess backend the run may share our uid. Forks (judge, child) inherit it."""
    _prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


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
        self.pending: tuple[int, str] | None = None  # (judge, scratch) still to be cleaned up

    def _scratch(self) -> str:
        self.runs += 1
        path = os.path.join(self.scratch_root, f"run-{self.runs}")
        os.mkdir(path, 0o700)
        if self.run_uid is not None:
            os.chown(path, self.run_uid, self.run_uid)
        return path

    def _child(self, request: dict, fds: dict[str, int], scratch: str) -> None:
        try:
            _runner.confine(request, fds, scratch, self.run_uid)
            _die_with_parent()  # after the uid change, which clears it
            _runner.run(request)
        except BaseException:
            os._exit(_HARNESS_FAILURE)
        os._exit(0)

    def _fork_run(self, request: dict, scratch: str) -> tuple[int, dict[str, int]]:
        """Forks the run's child (called in the judge, before it reads the tests); returns its
        pid and the judge's ends of its channel and output pipes."""
        channel, child_channel = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pipes = {name: os.pipe() for name in ("out", "err")}
        ends = {"report": child_channel.fileno(), "out": pipes["out"][1], "err": pipes["err"][1]}
        pid = os.fork()
        if pid == 0:
            channel.close()
            for read_end, _ in pipes.values():
                os.close(read_end)
            self._child(request, ends, scratch)
        child_channel.close()
        for _, write_end in pipes.values():
            os.close(write_end)
        return pid, {"channel": channel.detach(), "out": pipes["out"][0], "err": pipes["err"][0]}

    def serve(self, request: dict, host_in: int, host_out: int) -> bool:
        """One request: the judge answers the host itself; False if it failed to (the host's
        channel may then be out of step, so the warm interpreter must stop)."""
        scratch = self._scratch()
        request["nproc_base"] = self.nproc_base
        judge = os.fork()
        if judge == 0:
            try:
                facts = _judge.judge(request, host_in, lambda: self._fork_run(request, scratch))
                _protocol.write_frame(host_out, facts)
            except BaseException:
                os._exit(_HARNESS_FAILURE)
            os._exit(0)
        _, status = os.waitpid(judge, 0)
        self.pending = (judge, scratch)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

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
    _not_dumpable()
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
        served = zygote.serve(request, host_in, host_out)
        zygote.clean_up()
        if not served:
            return


if __name__ == "__main__":
    main()
