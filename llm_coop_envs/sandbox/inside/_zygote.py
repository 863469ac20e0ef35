"""The warm interpreter: started once per worker (inside bwrap, or as a plain subprocess), it
imports what programs commonly need, then splits in two: the long-lived judge (this process,
_judge.py) and the forking side (its child, the Zygote below), which forks one confined child
per program.

Run as a script (`python -E -s -S -B _zygote.py`), so its siblings import as top-level modules and
the rest of the package (and its dependencies) is never loaded here. It talks to the host over
length-prefixed JSON frames on what were its stdin/stdout; it never runs untrusted code itself.

A request is two frames: the program (read by the run's child itself), then its tests (read by
the judge). The forking side is split off before any request, and never reads a test or a
program, so no child forked from it ever holds a test or an earlier run's program. It forks each
run's child ahead of its request, as soon as the previous run has been swept: the child confines
itself (_confine.py: its own uid, mount and IPC namespace, seccomp filter) and then waits for the
request, so a request finds its run ready and pays for neither the fork nor the confinement.
Having read the request, the child closes the host channel, sets the request's rlimits and tells
the forking side only the run's limits and entry point; the forking side passes the child's pid,
socket, output pipes and pidfd to the judge (SCM_RIGHTS); when the judge is done it sweeps the
run, and only then does the judge answer the host. Only the run's child confines itself; the
judge keeps the warm interpreter's uid, file-system view and capabilities, and is not dumpable.
Under bwrap the judge is the PID namespace's init (`--as-pid-1`): the sweep's kill(-1) spares it,
and a run's signals without a handler never reach it. Under the subprocess backend the judge
makes the PID namespace as it forks the forking side, which is then its init (_namespaces.py).
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import importlib
import json
import os
import secrets
import select
import signal
import socket
import struct
import sys
import time

import _confine
import _isolated
import _judge
import _namespaces
import _protocol
import _reap
import _runner
import _seccomp
import _trash

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NAME = 15
# The isolations a result may list (ExecutionResult.isolation), in this order.
ISOLATIONS = ("file_view", "network", "pid_namespace", "run_uid", "ipc")
WAITING_NAME = b"next-run"  # a run's child while it waits for its request (ps; the tests look for it)


# Resolved once, before any fork: a dlopen and a symbol lookup in every child would cost it
# page faults (copies of the warm interpreter's memory) for nothing.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _name_process(name: bytes) -> None:
    _prctl(_PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)


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


@dataclasses.dataclass(frozen=True)
class _NextRun:
    """A run's child, forked and confined, waiting for its request on the host channel."""

    pid: int
    fds: dict[str, int]  # the judge's ends: the child's socket and output pipes
    report: int  # where the child says what the judge needs of the request, once it has read it
    scratch: str


class Zygote:
    def __init__(self, hello: dict) -> None:
        self.mode = "namespace" if hello["pid_namespace"] else "plain"
        # Root gives every run a uid of its own, so nothing a run leaves (a file, a process) is
        # owned by the uid of the next one.
        self.fresh_uids: bool = hello["fresh_uids"]
        self.run_uid: int | None = None
        self.scratch_root: str = hello["scratch_root"]
        self.nproc_base: int = hello.get("nproc_base", 0)
        self.run_scratch_mb: int = hello["run_scratch_mb"]
        self.runs = 0
        self.pending: int | None = None  # the run (or run-to-be) still to be cleaned up
        self.next: _NextRun | None = None
        self.scratch = os.path.join(self.scratch_root, "run")
        os.mkdir(self.scratch, 0o755)
        self.view = {"writable": _confine.writable_mounts()}
        self.private = _confine.namespaces_work(self.scratch, self.view)  # else: a scratch folder per run
        if hello.get("view") is not None and not self.private:
            raise RuntimeError("the file view was made, but runs cannot get a mount namespace")
        # Where a run could list the last run's unreaped processes, reap them all before it starts.
        # (hidepid hides other uids' processes: runs sharing one uid see each other's.)
        self.runs_see_only_their_own = self.fresh_uids and hello.get("own_proc", False)
        self.trash = None if self.private else _trash.Trash(self.scratch_root)

    def _next_run(self) -> str:
        """A uid and a scratch folder for the next run."""
        self.runs += 1
        if self.fresh_uids:
            self.run_uid = _fresh_uid()
            _remember_uid(self.scratch_root, self.run_uid)
        if self.private:
            return self.scratch  # a fresh tmpfs is mounted on it in the run's own namespace
        path = os.path.join(self.scratch_root, f"run-{self.runs}")
        os.mkdir(path, 0o700)
        if self.run_uid is not None:
            os.chown(path, self.run_uid, self.run_uid)
        return path

    def _child(self, host_in: int, report: int, fds: dict[str, int], scratch: str) -> None:
        try:
            _confine.prepare(scratch, self.run_uid, self.view if self.private else None,
                             self.run_scratch_mb)
            _die_with_parent()  # after the uid change, which clears it
            _name_process(WAITING_NAME)
            request = _read_request(host_in, report)
            _name_process(b"run")
            request["nproc_base"] = self.nproc_base
            request["own_shm"] = self.private  # a /dev/shm of the run's own (_isolated.py empties it)
            _confine.finish(request, fds)
            (_isolated.serve if request["limits"].get("isolate_tests") else _runner.run)(request)
        except BaseException:
            os._exit(_protocol.HARNESS_FAILURE)
        os._exit(0)

    def fork_next_run(self, host_in: int) -> None:
        """Forks the next request's child, which confines itself and then reads the request."""
        scratch = self._next_run()
        channel, child_channel = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pipes = {name: os.pipe() for name in ("out", "err")}
        report_r, report_w = os.pipe()
        ends = {"channel": child_channel.fileno(), "out": pipes["out"][1], "err": pipes["err"][1]}
        pid = os.fork()
        if pid == 0:
            channel.close()
            os.close(report_r)
            for read_end, _ in pipes.values():
                os.close(read_end)
            self._child(host_in, report_w, ends, scratch)
        self.pending = pid
        child_channel.close()
        os.close(report_w)
        for _, write_end in pipes.values():
            os.close(write_end)
        fds = {"channel": channel.detach(), "out": pipes["out"][0], "err": pipes["err"][0]}
        self.next = _NextRun(pid, fds, report_r, scratch)

    def serve(self, control: socket.socket) -> bool:
        """One request: once the waiting child has read it, hands the run's pid and file
        descriptors to the judge (which reads the tests and answers the host), then waits until
        the judge is done with the run. False when the host or the judge has gone."""
        run, self.next = self.next, None
        about = _read_report(run.report)
        if not about:  # the host has gone (or the child could not read its request)
            for fd in run.fds.values():
                os.close(fd)
            self.clean_up()
            return False
        pidfd = os.pidfd_open(run.pid)
        received = about.pop("received", None)
        about.update(pid=run.pid, marks={"received": received, "request_read": time.monotonic()})
        fds = run.fds
        ends = [fds["channel"], fds["out"], fds["err"], pidfd]
        try:
            socket.send_fds(control, [json.dumps(about).encode()], ends)
        finally:
            for fd in ends:
                os.close(fd)
        if not self._answer_judge(control, run.pid):
            return False
        self.clean_up()
        control.send(_judge.SWEPT)
        if self.trash is not None:
            self.trash.add(run.scratch)
        return True

    def _answer_judge(self, control: socket.socket, pid: int) -> bool:
        """Until the judge says it is done with the run: its exit status when the judge asks
        (only the parent can wait for it)."""
        while True:
            message = control.recv(16)
            if message == _judge.DONE:
                return True
            if message != _judge.WAIT:
                return False  # the judge has gone
            _, status = os.waitpid(pid, 0)
            control.send(struct.pack("!i", status))

    def clean_up(self) -> None:
        """Before the judge's reply (the judge killed only the run's first process, by its pidfd):
        one more atomic SIGKILL sweep over the run (a PID namespace's kill(-1), or a kill by the
        run's own uid), after which none of its processes can run code; their exit (which tears down the run's namespace and tmpfs, a few ms) then overlaps the next
        run, and they are reaped as they finish. Where no atomic sweep exists (walking /proc),
        or where the next run's /proc would list them (a zombie keeps its name and exit status),
        wait until they are all gone. A plain run's scratch folder was renamed into the trash,
        emptied while no request waits."""
        if self.pending is None:
            return
        if (self.mode == "namespace" or self.run_uid is not None) and self.runs_see_only_their_own:
            _reap.signal_run(self.mode, self.run_uid, self.pending)
            _reap.reap_exited()
        else:
            _reap.kill_run(self.mode, self.run_uid, self.pending)
        self.pending = None


def _read_request(host_in: int, report: int) -> dict:
    """The child's side: reads the program's frame from the host, and tells the forking side
    only what the judge needs. The forking side never holds a program, so no later run forked
    from it can find an earlier run's program in its memory."""
    try:
        size = _protocol.read_size(host_in)
        received = time.monotonic()
        request = _protocol.read_body(host_in, size)
        about = {"limits": request["limits"], "entry_point": request.get("entry_point"),
                 "received": received}
        if request.get("variants") is not None:  # the judge needs their entry points, not programs
            about["variants"] = [variant.get("entry_point") for variant in request["variants"]]
        _protocol.write_all(report, json.dumps(about).encode())
    finally:
        os.close(report)
    return request


def _read_report(fd: int) -> dict:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    try:
        about = json.loads(b"".join(chunks)) if chunks else {}
    except ValueError:
        return {}
    return about if isinstance(about, dict) else {}


def _fresh_uid() -> int:
    return 1_000_000 + secrets.randbelow(2_000_000_000 - 1_000_000)


def _remember_uid(scratch_root: str, uid: int) -> None:
    """Written where the host can read it: if this interpreter dies mid-run, the host kills the
    run's processes by this uid (worker.py)."""
    path = os.path.join(scratch_root, _protocol.RUN_UID_FILE)
    fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, str(uid).encode())
    os.close(fd)
    os.replace(path + ".new", path)


def main() -> None:
    host_in, host_out = _take_host_channel()
    hello = _protocol.read_frame(host_in)
    if hello.get("user_namespace"):  # an ordinary user without bwrap (backend.view_mode)
        _namespaces.enter_user_namespace()
    if not hello["pid_namespace"]:
        _die_with_parent()
    _not_dumpable()
    sys.path[1:1] = hello.get("path", [])  # the allowed packages, after the harness's folder
    failed = _preload(hello.get("preload", []))
    # Everything imported so far is shared with every child; frozen objects are never scanned
    # by a child's garbage collector, so their pages are not copied on write.
    gc.collect()
    gc.freeze()
    control, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    missing: dict[str, str] = {}
    if hello.get("view") is not None:  # the subprocess backend: the forking side is a PID 1
        why = _namespaces.new_pid_namespace()
        if why is not None:
            missing["pid_namespace"] = why
    if os.fork() == 0:
        control.close()
        _zygote(hello, host_in, zygote_end, missing)
        os._exit(0)
    zygote_end.close()
    ready = control.recv(1 << 16)
    if not ready.startswith(b"ready"):
        return
    _protocol.write_frame(host_out, {"ready": True, "pid": os.getpid(), "preload_failed": failed,
                                     "isolation": json.loads(ready[len(b"ready"):])})
    _judge.serve(host_in, host_out, control)


def _zygote(hello: dict, host_in: int, control: socket.socket, missing: dict[str, str]) -> None:
    """The forking side: never reads a test, so no run forked from it can find one. `missing`:
    the isolations the judge could not set up for it, with why."""
    _die_with_parent()
    _reap.become_subreaper()
    if hello.get("view") is not None:
        # The subprocess backend: from here on this process, and every run it forks, is alone on
        # a network of its own (if `new_network` held) and sees only the allow-list of the host,
        # with a /proc of its own PID namespace (the judge keeps the host's network and view).
        why = _namespaces.new_network()
        if why is not None:
            missing["network"] = why
        work_dir = os.path.join(hello["scratch_root"], "view")
        os.mkdir(work_dir, 0o700)
        why = _confine.enter_view(hello["view"], work_dir, fresh_proc="pid_namespace" not in missing)
        if why is not None:
            missing["pid_namespace"] = why
        hello["pid_namespace"] = hello["own_proc"] = "pid_namespace" not in missing
        host_path, view_path = hello["harness"]  # where this folder is, on the host and in the view
        sys.path[:] = [view_path if entry == host_path else entry for entry in sys.path]
    elif hello.get("bwrap"):
        hello["own_proc"] = _confine.own_proc() is None
    zygote = Zygote(hello)
    zygote.fork_next_run(host_in)
    control.send(b"ready" + json.dumps(_isolation(hello, zygote, missing)).encode())
    while True:
        served = zygote.serve(control)
        if not served:
            return
        zygote.fork_next_run(host_in)
        if zygote.trash is not None:
            zygote.trash.empty_until(lambda: _waiting(host_in) or _waiting(zygote.next.report))


def _isolation(hello: dict, zygote: Zygote, missing: dict[str, str]) -> dict:
    """What keeps each run apart from the host and from other runs (docs/sandbox.md's table):
    {"held": [names], "missing": {name: why}} for the names of ISOLATIONS."""
    held = {"file_view": hello.get("view") is not None or hello.get("bwrap", False),
            "network": hello.get("bwrap", False) or (hello.get("view") is not None
                                                     and "network" not in missing),
            "pid_namespace": hello["pid_namespace"],
            "run_uid": zygote.fresh_uids,
            "ipc": _seccomp.AVAILABLE or hello.get("bwrap", False) or zygote.private}
    return {"held": [name for name in ISOLATIONS if held[name]], "missing": missing}


def _waiting(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


if __name__ == "__main__":
    main()
