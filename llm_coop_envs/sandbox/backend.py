"""Choosing a backend and building the command that starts a warm interpreter under it."""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from dataclasses import dataclass

from llm_coop_envs.sandbox.inside import _protocol

# What runs inside the warm interpreter: a folder of its own (see its README.md), the only part of
# the package a sandbox sees.
INSIDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside")
ZYGOTE_SCRIPT = os.path.join(INSIDE_DIR, "_zygote.py")
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
# The warm interpreter's capabilities (root): switch each run to its own uid, kill it, give it
# its own mount and IPC namespace; the run itself keeps none of them.
_ZYGOTE_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE",
                "CAP_FOWNER", "CAP_SYS_ADMIN")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                 "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
HARNESS_DIR = "/harness"  # inside bwrap: INSIDE_DIR, read-only
SITE_DIR = "/site"  # inside bwrap: the allowed packages (see allowed_packages)

FALLBACK_WARNING = (
    "bubblewrap (`bwrap`) is not usable here, so untrusted code runs under the 'subprocess' "
    "backend: resource limits, its own session, a clean environment, a fresh uid, a file view of "
    "the system folders and the interpreter only, and (where the kernel allows) a network and PID "
    "namespace of each warm interpreter's own; each result's `isolation` lists what held. Install "
    "bubblewrap (Debian package `bubblewrap`) for the sandbox tested most; see docs/sandbox.md.")
UNCONFINED_WARNING = (
    "backend='unconfined': untrusted code runs with NO file view: it can read (and as an ordinary "
    "user write) every file this user can, answer keys included (data sets, other environments' "
    "packages), and NO network isolation. Do not train on its rewards unless you trust the code; "
    "see docs/sandbox.md.")
# How a user opts in by name where neither bwrap nor mount namespaces work (also for "auto").
BACKEND_VARIABLE = "LLM_COOP_SANDBOX_BACKEND"


def refusal(backend: str) -> str:
    """The one-line error for a backend that would have to run untrusted code without a file view."""
    why = ("bubblewrap does not start here and " if backend == "auto" else "")
    return (f"backend={backend!r}: {why}this process cannot give runs a mount namespace (not root "
            "or no CAP_SYS_ADMIN, and no unprivileged user namespaces), so untrusted code would read "
            "every file this user can, answer keys "
            "included; install bubblewrap (with unprivileged user namespaces) or run as root, or opt "
            f"in by name: SandboxConfig(backend='unconfined') or {BACKEND_VARIABLE}=unconfined")


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
    """Namespaces and the writable parts; the read-only view comes from `_view`."""
    args = ["bwrap", "--dev", "/dev", "--proc", "/proc",
            "--size", str(scratch_bytes), "--tmpfs", "/tmp",
            "--size", str(_protocol.SHM_BYTES), "--tmpfs", "/dev/shm",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--die-with-parent",
            "--hostname", "sandbox", "--chdir", "/tmp",
            "--as-pid-1"]  # the judge is the namespace's init: see _zygote.py
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    else:
        args += ["--unshare-user"]
    for cap in _ZYGOTE_CAPS if os.geteuid() == 0 else ("CAP_SYS_ADMIN",):
        args += ["--cap-add", cap]
    return args


def _system_view() -> list[tuple[str, str, str]]:
    """The allow-list both backends show a run, as (kind, source, target) entries in mount order:
    the system's programs and libraries, a few /etc files (dynamic linker, time zone, passwd), the
    interpreter with its standard library, and an empty folder over every site-packages /
    dist-packages folder those would otherwise show. Nothing else of the host: no /home, /root
    (but the interpreter's own folder when it lives there), /opt, /srv, /mnt, /work, /tmp."""
    entries: list[tuple[str, str, str]] = []
    for path in _SYSTEM_DIRS + _SYSTEM_FILES:
        if os.path.islink(path):
            entries.append(("symlink", os.readlink(path), path))
        elif os.path.exists(path):
            entries.append(("bind", path, path))
    for path in _interpreter_paths():
        if not any(path == d or path.startswith(d + "/") for d in _SYSTEM_DIRS):
            entries.append(("bind", path, path))
    entries += [("tmpfs", "", path) for path in _site_dirs()]
    return entries


def _view(preload: tuple[str, ...] = ()) -> list[str]:
    """bwrap's read-only file system: `_system_view`, the harness (INSIDE_DIR, at HARNESS_DIR), and
    the allowed packages (at SITE_DIR)."""
    args: list[str] = []
    made: set[str] = set()
    for kind, source, target in _system_view():
        if kind == "symlink":
            args += ["--symlink", source, target]
        elif kind == "tmpfs":
            args += ["--tmpfs", target]  # also covers site-packages inside the interpreter's prefix
        elif any(target == d or target.startswith(d + "/") for d in _SYSTEM_DIRS):
            args += ["--ro-bind", source, target]
        else:
            args += _traversable_dirs(target, made) + ["--ro-bind", source, target]
    args += ["--ro-bind", INSIDE_DIR, HARNESS_DIR]
    for name, path in allowed_packages(preload).items():
        args += ["--ro-bind", path, f"{SITE_DIR}/{name}"]
    return args


# The devices a run may open (bwrap's --dev gives the same), and /dev's links into /proc.
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = (("/proc/self/fd", "fd"), ("/proc/self/fd/0", "stdin"), ("/proc/self/fd/1", "stdout"),
              ("/proc/self/fd/2", "stderr"))


def subprocess_view(scratch: str, site_stubs: dict[str, str]) -> list[tuple[str, str, str]]:
    """The subprocess backend's file view, built once by the warm interpreter's forking side in a
    mount namespace of its own (`_confine.enter_view`) and inherited by every run: `_system_view`,
    the harness at HARNESS_DIR (as under bwrap), the allowed packages bound on their stubs in
    `site_stubs`, a minimal /dev, the host's /proc, and the worker's scratch folder (writable: the
    forking side writes there; each run mounts its own tmpfs inside it)."""
    entries = _system_view()
    entries.append(("bind", INSIDE_DIR, HARNESS_DIR))
    entries += [("tmpfs", "", "/dev")]
    entries += [("device", f"/dev/{name}", f"/dev/{name}") for name in _DEVICES
                if os.path.exists(f"/dev/{name}")]
    entries += [("symlink", target, f"/dev/{name}") for target, name in _DEV_LINKS]
    entries += [("dir", "", "/dev/shm"), ("proc", "/proc", "/proc"), ("scratch", scratch, scratch)]
    entries += [("bind", source, stub) for stub, source in site_stubs.items()]
    return entries


def _traversable_dirs(path: str, made: set[str]) -> list[str]:
    """bwrap creates missing parents of a bind target as 0700; create them 0755 first."""
    args: list[str] = []
    parent = os.path.dirname(path)
    chain = []
    while parent not in made and parent not in ("/", ""):
        chain.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(chain):
        args += ["--perms", "0755", "--dir", directory]
        made.add(directory)
    return args


def _interpreter_paths() -> list[str]:
    """The real interpreter (not a virtual environment's link to it), its prefix, and a copied
    virtual environment's bin folder and pyvenv.cfg; sorted, without paths below another."""
    executable = os.path.realpath(sys.executable)
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix),
             os.path.dirname(executable)}
    venv_cfg = os.path.join(os.path.dirname(os.path.dirname(executable)), "pyvenv.cfg")
    if os.path.exists(venv_cfg):
        paths.add(venv_cfg)
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def _site_dirs() -> list[str]:
    """Every site-packages/dist-packages folder the view would otherwise show."""
    patterns = ["/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages",
                "/usr/lib/python3/dist-packages"]
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        patterns += [os.path.join(os.path.realpath(prefix), "lib*", "python3*", "*-packages")]
    found = {p for pattern in patterns for p in glob.glob(pattern) if os.path.isdir(p)}
    return sorted(found)


def allowed_packages(preload: tuple[str, ...]) -> dict[str, str]:
    """The folders (or single-file modules) of preload modules that live outside the standard
    library: the explicit allow-list of what a sandbox may import from site-packages."""
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    allowed = {}
    for name in preload:
        if name in sys.builtin_module_names:
            continue
        spec = importlib.util.find_spec(name)
        origin = spec and (spec.submodule_search_locations or [spec.origin])[0]
        if origin and not os.path.realpath(origin).startswith(stdlib + "/"):
            allowed[os.path.basename(origin)] = os.path.realpath(origin)
    return allowed


def _python_argv(script: str) -> list[str]:
    # -E -s: no environment, no user site; -S: no site-packages on the path (the allowed ones
    # come through hello["path"]); -B: write no bytecode.
    return [os.path.realpath(sys.executable), "-E", "-s", "-S", "-B", script]


@functools.lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """Whether a bwrap sandbox with our namespaces starts here (probed once per process)."""
    if shutil.which("bwrap") is None:
        return False
    argv = _bwrap_base(1 << 20) + _view() + [os.path.realpath(sys.executable), "-E", "-s", "-S", "-c", "pass"]
    try:
        done = subprocess.run(argv, env=CLEAN_ENV, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


# Whether a process may give itself a mount namespace and mount there (argv: a folder, and "user"
# to try from a user namespace of its own): the subprocess backend's file view needs it (root with
# CAP_SYS_ADMIN, or unprivileged user namespaces). Run in a fresh interpreter, never a fork of ours.
_VIEW_PROBE = """
import ctypes, sys
sys.path.insert(0, sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[2] == "user":
    import _namespaces
    _namespaces.enter_user_namespace()
ok = (libc.unshare(0x00020000) == 0
      and libc.mount(None, b"/", None, ctypes.c_ulong(16384 | (1 << 18)), None) == 0
      and libc.mount(b"tmpfs", sys.argv[1].encode(), b"tmpfs", ctypes.c_ulong(6), b"size=4k") == 0)
sys.exit(0 if ok else 1)
"""


def _view_probe(mode: str) -> bool:
    probe_dir = tempfile.mkdtemp(prefix="llm-coop-view-probe-")
    try:
        argv = [os.path.realpath(sys.executable), "-E", "-s", "-S", "-c", _VIEW_PROBE, probe_dir,
                mode, INSIDE_DIR]
        done = subprocess.run(argv, env=CLEAN_ENV,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        os.rmdir(probe_dir)
    return done.returncode == 0


@functools.lru_cache(maxsize=1)
def view_mode() -> str | None:
    """How the subprocess backend can give its runs the allow-list file view here: "root" (this
    process may make mount namespaces), "user" (from a user namespace of the warm interpreter's
    own: an ordinary user where the kernel allows them), or None (it cannot)."""
    return next((mode for mode in ("root", "user") if _view_probe(mode)), None)


def view_works() -> bool:
    """Whether the subprocess backend can give its runs the allow-list file view here."""
    return view_mode() is not None


_warned: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """A SandboxWarning, once per process for each `key`."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, SandboxWarning, stacklevel=4)


def resolve(backend: str) -> str:
    """The backend that runs: "bwrap"; "subprocess" (its runs see the allow-list file view);
    or "unconfined" (the subprocess backend without a file view), only when the user named it
    (here or, for "auto", in LLM_COOP_SANDBOX_BACKEND) and the file view cannot be made.
    "auto" -> "bwrap" when it works, else "subprocess" with a one-time SandboxWarning, else
    SandboxUnavailable: untrusted code never reads the host's files unless the user opted in."""
    if backend == "auto":
        chosen = os.environ.get(BACKEND_VARIABLE, "").strip()
        if chosen and chosen != "auto":
            if chosen not in ("bwrap", "subprocess", "unconfined"):
                raise ValueError(f"{BACKEND_VARIABLE}={chosen!r}: use one of 'bwrap', 'subprocess', "
                                 "'unconfined', or leave it unset")
            backend = chosen
    if backend == "bwrap":
        if not bwrap_works():
            raise SandboxUnavailable("backend='bwrap' but bubblewrap does not start here: install the "
                                     "`bubblewrap` package, or use backend='auto'/'subprocess'")
        return "bwrap"
    if backend == "auto" and bwrap_works():
        return "bwrap"
    if view_works():
        if backend == "auto":
            warn_once("auto", FALLBACK_WARNING)
        return "subprocess"
    if backend == "unconfined":
        warn_once("unconfined", UNCONFINED_WARNING)
        return "unconfined"
    raise SandboxUnavailable(refusal(backend))


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


def plan(backend: str, preload: tuple[str, ...], max_file_mb: int) -> LaunchPlan:
    """How to start a warm interpreter whose runs get a scratch folder of `max_file_mb` each.
    `backend` is what `resolve` returned."""
    # Root gives every run a uid of its own: RLIMIT_NPROC is not enforced for root, and another
    # uid can neither signal the warm interpreter nor read what an earlier run left. (In a user
    # namespace of its own, only the caller's uid exists.)
    in_user_namespace = backend == "subprocess" and view_mode() == "user"
    fresh_uids = os.geteuid() == 0 and not in_user_namespace
    # bwrap's /tmp: where runs get no tmpfs of their own, it holds the run's folder and the last
    # one's (still being emptied), plus room for the warm interpreter's own files.
    scratch_mb = max_file_mb * 2 + 8
    hello = {"preload": list(preload), "fresh_uids": fresh_uids, "run_scratch_mb": max_file_mb,
             "nproc_base": 0 if fresh_uids else _user_tasks() + 64}
    allowed = allowed_packages(preload)
    if backend == "bwrap":
        argv = (_bwrap_base(scratch_mb << 20) + _view(preload)
                + _python_argv(os.path.join(HARNESS_DIR, os.path.basename(ZYGOTE_SCRIPT))))
        hello.update(pid_namespace=True, bwrap=True, scratch_root="/tmp",
                     path=[SITE_DIR] if allowed else [])
        return LaunchPlan("bwrap", argv, hello, None)
    if backend not in ("subprocess", "unconfined"):
        raise ValueError(f"backend={backend!r}: resolve() it first")
    scratch = tempfile.mkdtemp(prefix="llm-coop-sandbox-")
    os.chmod(scratch, 0o711)  # runs under another uid must reach their own subfolder
    hello.update(pid_namespace=False, scratch_root=scratch, path=[], view=None)
    stubs: dict[str, str] = {}
    if allowed:
        site_dir = os.path.join(scratch, "site")
        os.mkdir(site_dir, 0o755)
        for name, path in allowed.items():
            stub = os.path.join(site_dir, name)
            if backend == "unconfined":
                os.symlink(path, stub)
            elif os.path.isdir(path):
                os.mkdir(stub, 0o755)  # the package is bound here in the view
                stubs[stub] = path
            else:
                open(stub, "x").close()
                stubs[stub] = path
        hello["path"] = [site_dir]
    if backend == "subprocess":
        hello.update(view=subprocess_view(scratch, stubs), harness=[INSIDE_DIR, HARNESS_DIR],
                     user_namespace=in_user_namespace)
    return LaunchPlan(backend, _python_argv(ZYGOTE_SCRIPT), hello, scratch)
