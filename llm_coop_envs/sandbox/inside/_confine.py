"""Confinement of a forked child: everything that must happen before the first untrusted byte runs.

Runs in the warm interpreter's fork, in two parts: `prepare`, before the run's request has come
(the child then waits for it, confined), and `finish`, once the child has read the request, for
what the request decides and for closing the host channel. Nothing here may be reachable by the
program afterwards (it is all done by the time untrusted code runs).

Where the warm interpreter may create namespaces (root, or bwrap's user namespace), every run gets
a mount namespace of its own: a fresh size- and inode-bounded tmpfs as its scratch folder and
/dev/shm, every other mount read-only. System V IPC and POSIX queues are denied by the seccomp
filter; where there is none (not x86_64), the run gets an IPC namespace of its own instead. When the run's last process exits, the kernel drops all of it at once, so what a run
leaves behind can neither reach nor slow down the next one.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import threading

import _protocol
import _seccomp
from _runner import CHANNEL_FD

_CLONE_NEWNS, _CLONE_NEWIPC = 0x00020000, 0x08000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 32, 4096
_MS_REC, _MS_PRIVATE = 16384, 1 << 18
_KEPT_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
               "relatime": 2097152}
MAX_SCRATCH_FILES = 16384  # inodes of the scratch tmpfs: bounds what a run can leave behind
_CAP_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           options: str | None = None) -> None:
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), options and options.encode()), f"mount {target}")


def writable_mounts() -> list[tuple[str, int]]:
    """The mounts a run could write to, with the flags that a read-only remount must keep (a user
    namespace may not clear a flag its parent set). Read once by the warm interpreter: its mount
    table does not change, and a child then only makes the remount calls."""
    found = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            point, options = fields[4].decode(), fields[5].decode().split(",")
            if "ro" in options or point in ("/proc", "/sys") or point.startswith(("/proc/", "/sys/")):
                continue
            found.append((point, sum(flag for name, flag in _KEPT_FLAGS.items() if name in options)))
    return found


def _reveal(private: dict[str, list[str]]) -> None:
    """Replaces each private folder (e.g. /root) by an empty, traversable one holding only the
    given paths below it (the interpreter), which the run's uid could not reach otherwise."""
    for folder, keep in private.items():
        sources = [os.open(path, os.O_PATH) for path in keep]
        _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
        for path, fd in zip(keep, sources):
            os.makedirs(path, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
            os.close(fd)


def private_mounts(scratch: str, uid: int, scratch_mb: int, view: dict) -> None:
    """A mount namespace of this run's own, with fresh tmpfs at `scratch` (`scratch_mb`) and
    /dev/shm, every mount in view["writable"] read-only, and an empty read-only folder in place of
    each of view["hidden"]. An IPC namespace too, unless the seccomp filter already denies all IPC."""
    _check(_libc.unshare(_CLONE_NEWNS | (0 if _seccomp.AVAILABLE else _CLONE_NEWIPC)), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _reveal(view.get("private", {}))
    for point, kept in view["writable"]:
        try:
            _mount(None, point, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)
        except OSError:
            continue  # covered by another mount since; the uid and seccomp filter remain
    owner = f"mode=0700,uid={uid},gid={uid}"
    _mount("tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={scratch_mb}m,nr_inodes={MAX_SCRATCH_FILES},{owner}")
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={_protocol.SHM_BYTES},nr_inodes=256,{owner}")
    for path in view.get("hidden", []):
        # A path below a private folder is gone already (e.g. a venv inside the hidden checkout).
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "size=4k,nr_inodes=1")


def namespaces_work(probe_dir: str) -> bool:
    """Whether a forked child can make the run's private mounts here (probed once per worker)."""
    pid = os.fork()
    if pid == 0:
        try:
            private_mounts(probe_dir, os.getuid(), 1, {"writable": writable_mounts()})
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _drop_capabilities() -> None:
    """Clears every capability (bwrap's user namespace gives the warm interpreter some)."""
    empty = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), empty), "capset")


def _wire_fds(fds: dict[str, int]) -> None:
    """stdin from /dev/null, stdout/stderr to the capture pipes, the judge's socket on CHANNEL_FD, and
    nothing else open: the host channel of the warm interpreter must not be reachable."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(fds["out"], 1)
    os.dup2(fds["err"], 2)
    os.dup2(fds["channel"], CHANNEL_FD)
    os.closerange(CHANNEL_FD + 1, 1 << 16)


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
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    _drop_capabilities()


def _disable_trace_hooks() -> None:
    """A trace function can jump over an assert (frame.f_lineno = ...); take the tool away."""
    def refuse(*args, **kwargs):
        raise PermissionError("tracing and profiling hooks are disabled in the sandbox")
    sys.settrace(None)
    sys.setprofile(None)
    sys.settrace = sys.setprofile = refuse
    threading.settrace = threading.setprofile = refuse


def prepare(scratch: str, uid: int | None, view: dict | None, scratch_mb: int) -> None:
    """The confinement no request decides, done before the request comes: own session, mounts
    (`view`: None, or what to hide and reveal in the run's own mount and IPC namespace, see the
    module's docstring), working folder, environment, uid, no capabilities, no trace hooks, the
    seccomp filter. The child then holds only the host channel, to read its request from."""
    os.setsid()
    if view is not None:
        private_mounts(scratch, uid if uid is not None else os.getuid(), scratch_mb, view)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"HOME": scratch, "TMPDIR": scratch, "PATH": "/usr/local/bin:/usr/bin:/bin",
                       "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"})
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    _drop_privileges(uid)
    _disable_trace_hooks()
    _seccomp.install()


def finish(request: dict, fds: dict[str, int]) -> None:
    """Once the request has been read: only the judge's socket and the output pipes stay open
    (the host channel is closed), and the request's limits are set."""
    _wire_fds(fds)
    _set_limits(request["limits"], request.get("nproc_base", 0))
