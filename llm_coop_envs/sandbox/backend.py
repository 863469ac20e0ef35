"""Choosing a backend and building the command that starts a warm interpreter under it."""

from __future__ import annotations

import functools
import os
import random
import shutil
import site
import stat
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass

ZYGOTE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_zygote.py")
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
# Paths that get a fresh, empty file system inside bwrap; an interpreter living below one of them
# must be bound back in (DESIGN.md: CI checkouts and venvs may live under /tmp).
_HIDDEN_ROOTS = ("/tmp", "/run", "/dev/shm")
_ZYGOTE_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER")

FALLBACK_WARNING = (
    "bubblewrap (`bwrap`) is not usable here, so untrusted code runs under the 'subprocess' "
    "backend: resource limits, its own session, a clean environment and a scratch directory, but "
    "NO network isolation, NO read-only file system (the program can write wherever this user "
    "can), NO PID namespace, and daemons can outlive a run if the host is killed. Install "
    "bubblewrap (Debian package `bubblewrap`) for the strong sandbox; see docs/sandbox.md.")


class SandboxWarning(RuntimeWarning):
    """The sandbox runs with weaker isolation than requested or documented."""


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot start on this machine."""


@dataclass(frozen=True)
class LaunchPlan:
    backend: str
    argv: list[str]
    hello: dict
    scratch_dir: str | None  # created on the host (subprocess backend); removed on shutdown


def _bwrap_base(scratch_bytes: int) -> list[str]:
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(scratch_bytes), "--tmpfs", "/tmp",
            "--size", str(1 << 20), "--tmpfs", "/dev/shm",
            "--tmpfs", "/run",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--die-with-parent",
            "--hostname", "sandbox", "--chdir", "/tmp"]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
        for cap in _ZYGOTE_CAPS:
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-user"]
    return args


def _under_hidden_root(path: str) -> bool:
    # A hidden root itself is never bound back: that would cover the scratch file system.
    return any(path.startswith(root + "/") for root in _HIDDEN_ROOTS)


def _private_ancestor(path: str) -> str | None:
    """The highest directory above `path` that other users cannot traverse (e.g. /root), if any:
    a run under its own uid could not import the interpreter's modules through it."""
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        ancestor = "/" + "/".join(parts[:depth])
        try:
            if not os.stat(ancestor).st_mode & stat.S_IXOTH:
                return ancestor
        except OSError:
            return None
    return None


def _visible_again(paths: list[str]) -> list[str]:
    """Mount arguments that keep the interpreter readable inside bwrap: paths below a fresh
    tmpfs (/tmp, /run) are bound back, and a private ancestor (e.g. /root) is replaced by an
    empty, traversable tmpfs with only the interpreter's paths bound into it, which also hides
    the rest of it (keys, tokens) from the run."""
    wanted = sorted(p for p in {os.path.realpath(p) for p in paths} | set(paths) if os.path.exists(p))
    private = sorted({a for a in map(_private_ancestor, wanted) if a and not _under_hidden_root(a)})
    args: list[str] = []
    made: set[str] = set(private)
    for ancestor in private:
        args += ["--tmpfs", ancestor]
    bound: list[str] = []
    for path in wanted:  # sorted: a folder comes before what it contains
        if any(path.startswith(b + "/") for b in bound):
            continue
        if _under_hidden_root(path) or any(path.startswith(a + "/") for a in private):
            bound.append(path)
            args += _traversable_dirs(path, made) + ["--ro-bind", path, path]
    return args


def _traversable_dirs(path: str, made: set[str]) -> list[str]:
    """bwrap creates missing parents of a bind target as 0700; create them 0755 first."""
    args: list[str] = []
    parent = os.path.dirname(path)
    chain = []
    while parent not in made and parent not in ("/", "") and not any(
            parent == r for r in _HIDDEN_ROOTS):
        chain.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(chain):
        args += ["--perms", "0755", "--dir", directory]
        made.add(directory)
    return args


def _interpreter_paths() -> list[str]:
    """What the warm interpreter needs: the interpreter, its standard library and
    site-packages, and this folder (not the caller's own sys.path entries)."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(ZYGOTE_SCRIPT),
             os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))]
    return paths + [p for p in site.getsitepackages() if os.path.isdir(p)]


def _python_argv() -> list[str]:
    return [sys.executable, "-s", "-E", "-B", ZYGOTE_SCRIPT]


@functools.lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """Whether a bwrap sandbox with our namespaces starts here (probed once per process)."""
    if shutil.which("bwrap") is None:
        return False
    argv = _bwrap_base(1 << 20) + _visible_again(_interpreter_paths()) + [sys.executable, "-c", "pass"]
    try:
        done = subprocess.run(argv, env=CLEAN_ENV, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


_warned = False


def resolve(backend: str) -> str:
    """"auto" -> "bwrap" when it works, else "subprocess" with a one-time SandboxWarning."""
    global _warned
    if backend == "bwrap" and not bwrap_works():
        raise SandboxUnavailable("backend='bwrap' but bubblewrap does not start here: install the "
                                 "`bubblewrap` package, or use backend='auto'/'subprocess'")
    if backend != "auto":
        return backend
    if bwrap_works():
        return "bwrap"
    if not _warned:
        _warned = True
        warnings.warn(FALLBACK_WARNING, SandboxWarning, stacklevel=3)
    return "subprocess"


def _run_uid() -> int | None:
    """A uid of its own per worker when we are root: RLIMIT_NPROC is not enforced for root,
    and another uid cannot signal the warm interpreter nor read the caller's files."""
    if os.geteuid() != 0:
        return None
    return random.SystemRandom().randrange(1_000_000, 2_000_000_000)


def _user_tasks() -> int:
    """Threads this uid already runs: RLIMIT_NPROC counts them all, so the limit must add them."""
    uid, count = os.getuid(), 0
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                count += len(os.listdir(f"/proc/{name}/task"))
        except OSError:
            continue
    return count


def plan(backend: str, preload: tuple[str, ...], scratch_mb: int) -> LaunchPlan:
    run_uid = _run_uid()
    hello = {"preload": list(preload), "run_uid": run_uid,
             "nproc_base": 0 if run_uid is not None else _user_tasks() + 64}
    if backend == "bwrap":
        argv = _bwrap_base(scratch_mb << 20) + _visible_again(_interpreter_paths()) + _python_argv()
        return LaunchPlan("bwrap", argv, {**hello, "pid_namespace": True, "scratch_root": "/tmp"}, None)
    scratch = tempfile.mkdtemp(prefix="llm-coop-sandbox-")
    os.chmod(scratch, 0o711)  # runs under another uid must reach their own subfolder
    return LaunchPlan("subprocess", _python_argv(),
                      {**hello, "pid_namespace": False, "scratch_root": scratch}, scratch)
