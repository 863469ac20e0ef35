"""Confinement of a forked child: everything that must happen before the first untrusted byte runs.

Runs in the warm interpreter's fork, in two parts: `prepare`, before the run's request has come
(the child then waits for it, confined), and `finish`, once the child has read the request, for
what the request decides and for closing the host channel. Nothing here may be reachable by the
program afterwards (it is all done by the time untrusted code runs).

Where the warm interpreter may create namespaces (root, or bwrap's user namespace), every run gets
a mount namespace of its own: a fresh size- and inode-bounded tmpfs as its scratch folder and
/dev/shm, every other mount read-only. Under the subprocess backend that namespace is a copy of the
forking side's, which `enter_view` reduced once to an allow-list of the host (bwrap's view, built
with mount calls, with a /proc of the forking side's own PID namespace, see _namespaces.py). System V IPC and POSIX queues are denied by the seccomp
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
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 8, 32, 4096
_MS_MOVE, _MS_REC, _MS_PRIVATE = 8192, 16384, 1 << 18
_MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}  # syscall numbers (glibc has no wrapper)
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


def _mount_table() -> list[tuple[str, list[str], int]]:
    """Every mount: (mount point, its options, the flags a remount of it must keep: a user
    namespace may not clear a flag its parent set)."""
    table = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            point, options = fields[4].decode(), fields[5].decode().split(",")
            table.append((point, options, sum(flag for name, flag in _KEPT_FLAGS.items()
                                              if name in options)))
    return table


def writable_mounts() -> list[tuple[str, int]]:
    """The mounts a run could write to, with the flags that a read-only remount must keep. Read
    once by the warm interpreter: its mount table does not change, and a child then only makes
    the remount calls."""
    return [(point, kept) for point, options, kept in _mount_table()
            if not ("ro" in options or point in ("/proc", "/sys")
                    or point.startswith(("/proc/", "/sys/")))]


def _kept_flags(path: str, table: list[tuple[str, list[str], int]]) -> int:
    """The flags a read-only remount of a bind of `path` must keep: those of the mount holding it
    (the last one mounted on the longest matching mount point)."""
    best, kept = -1, 0
    for point, _, flags in table:
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= best:
            best, kept = len(point), flags
    return kept


def _pivot_root(new_root: str) -> None:
    """Makes `new_root` this mount namespace's root and detaches the old one entirely."""
    os.chdir(new_root)
    number = _PIVOT_ROOT.get(os.uname().machine)
    if number is not None and _libc.syscall(number, b".", b".") == 0:
        _check(_libc.umount2(b".", _MNT_DETACH), "umount2 old root")  # the old root, stacked on "."
    else:  # no known syscall number: move the new root over "/" (as switch_root does)
        _mount(new_root, "/", None, _MS_MOVE)
        _check(_libc.chroot(b"."), "chroot")
    os.chdir("/")


def _stub(path: str, directory: bool) -> None:
    """An empty folder or file to mount on, with its missing parents (0755)."""
    os.makedirs(path if directory else os.path.dirname(path), 0o755, exist_ok=True)
    if not directory and not os.path.exists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def enter_view(entries: list, work_dir: str, fresh_proc: bool) -> str | None:
    """The subprocess backend's allow-list file view (see backend.subprocess_view), entered once by
    the forking side, whose runs inherit it: a mount namespace of its own whose root is a fresh
    read-only tmpfs holding only `entries`, each (kind, source, target): "bind" (read-only,
    recursive), "device" (read-only, devices allowed), "symlink", "tmpfs" (empty, read-only),
    "dir", "proc", "scratch" (writable). The host's root is detached: nothing else of it can be
    reached by any path. `work_dir` is an empty folder to build the root on.

    "proc" is a procfs of the caller's own PID namespace when `fresh_proc` (the caller is that
    namespace's init, see _namespaces.py), else, or if that mount fails, the host's /proc (a PID
    namespace alone would leave every host process listed there). Returns None, or why a fresh
    procfs was wanted and not made."""
    os.umask(0o022)
    proc_failure = None
    table = _mount_table()
    _check(_libc.unshare(_CLONE_NEWNS), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount("tmpfs", work_dir, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m,nr_inodes=4096")
    read_only: list[tuple[str, int]] = []
    plain = _MS_NOSUID | _MS_NODEV
    for kind, source, target in entries:
        at = work_dir + target
        if kind == "symlink":
            _stub(os.path.dirname(at), True)
            os.symlink(source, at)
        elif kind in ("tmpfs", "dir"):
            _stub(at, True)
            if kind == "tmpfs":
                _mount("tmpfs", at, "tmpfs", plain, "mode=0755,size=64k,nr_inodes=256")
                read_only.append((at, plain))
        elif kind == "proc" and fresh_proc:
            _stub(at, True)
            try:
                _mount_proc(at)
            except OSError as exc:
                proc_failure = str(exc)
                _mount(source, at, None, _MS_BIND | _MS_REC)
        else:  # a bind mount of the host's `source`
            _stub(at, os.path.isdir(source))
            _mount(source, at, None, _MS_BIND | (_MS_REC if kind != "scratch" else 0))
            if kind in ("bind", "device"):
                own = _MS_NOSUID if kind == "device" else plain
                read_only.append((at, own | _kept_flags(os.path.realpath(source), table)))
    # Folders made above are read-only once everything is mounted on them (inner mounts first).
    for at, flags in reversed(read_only):
        _mount(None, at, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)
    _pivot_root(work_dir)
    _mount(None, "/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    return proc_failure


def own_proc() -> str | None:
    """Under bwrap, once for the forking side (whose runs inherit it): a mount namespace of its own
    with a /proc where runs see only their own uid's processes (bwrap's /proc lists the whole
    sandbox). None, or why not (bwrap in a user namespace: the kernel refuses a procfs there)."""
    try:
        _check(_libc.unshare(_CLONE_NEWNS), "unshare")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        _mount_proc("/proc")
    except OSError as exc:
        return str(exc)
    return None


def _mount_proc(at: str) -> None:
    """A procfs of the caller's PID namespace at `at`, where a run sees only the processes of its
    own uid (hidepid=2): not the forking side, and not an earlier run's zombie, whose name and
    exit status would otherwise carry a message to the next run."""
    _mount("proc", at, "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hidepid=2")


def private_mounts(scratch: str, uid: int, gid: int, scratch_mb: int, view: dict) -> None:
    """A mount namespace of this run's own, with fresh tmpfs at `scratch` (`scratch_mb`) and
    /dev/shm and every mount in view["writable"] read-only. An IPC namespace too,
    unless the seccomp filter already denies all IPC."""
    _check(_libc.unshare(_CLONE_NEWNS | (0 if _seccomp.AVAILABLE else _CLONE_NEWIPC)), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    for point, kept in view["writable"]:
        try:
            _mount(None, point, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)
        except OSError:
            continue  # covered by another mount since; the uid and seccomp filter remain
    owner = f"mode=0700,uid={uid},gid={gid}"
    _mount("tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={scratch_mb}m,nr_inodes={MAX_SCRATCH_FILES},{owner}")
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={_protocol.SHM_BYTES},nr_inodes=256,{owner}")


def namespaces_work(probe_dir: str, view: dict) -> bool:
    """Whether a forked child can make the run's private mounts (with `view`) here (probed once
    per worker)."""
    pid = os.fork()
    if pid == 0:
        try:
            private_mounts(probe_dir, os.getuid(), os.getgid(), 1, view)
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
    (`view`: None, or the mounts to make read-only in the run's own mount and IPC namespace, see
    the module's docstring), working folder, environment, uid, no capabilities, no trace hooks, the
    seccomp filter. The child then holds only the host channel, to read its request from."""
    os.setsid()
    if view is not None:
        # a fresh uid is its own gid too; else the caller's own ids (inside bwrap's user
        # namespace, only those are mapped: a gid other than the caller's is invalid there)
        ids = (uid, uid) if uid is not None else (os.getuid(), os.getgid())
        private_mounts(scratch, *ids, scratch_mb, view)
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
