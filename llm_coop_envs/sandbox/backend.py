"""Choosing a backend and building the command that starts a warm interpreter under it."""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import shutil
import site
import stat
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


def _view(preload: tuple[str, ...] = ()) -> list[str]:
    """The read-only file system a sandbox sees: the system's programs and libraries, the
    interpreter and its standard library, the harness (INSIDE_DIR, at HARNESS_DIR), and the
    allowed packages (at SITE_DIR). No site-packages, project files, data sets or home folders."""
    args: list[str] = []
    made: set[str] = set()
    for path in _SYSTEM_DIRS + _SYSTEM_FILES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in _interpreter_paths():
        if not any(path == d or path.startswith(d + "/") for d in _SYSTEM_DIRS):
            args += _traversable_dirs(path, made) + ["--ro-bind", path, path]
    args += ["--ro-bind", INSIDE_DIR, HARNESS_DIR]
    for name, path in allowed_packages(preload).items():
        args += ["--ro-bind", path, f"{SITE_DIR}/{name}"]
    for path in _site_dirs():
        args += ["--tmpfs", path]  # also covers site-packages inside the interpreter's prefix
    return args


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


def _hidden_on_host(scratch: str) -> list[str]:
    """What a run of the subprocess backend must not see, where it gets its own mount namespace
    (root): site-packages, the data sets and home folders, each replaced by an empty folder (the
    checkout: see plan). Paths holding the interpreter or the scratch folder stay visible."""
    candidates = ["/home", os.environ.get("LLM_COOP_DATA_DIR", "")]
    candidates += _site_dirs() + [p for p in site.getsitepackages() + [site.getusersitepackages()]]
    needed = _interpreter_paths() + [scratch]
    hidden = set()
    for path in filter(None, candidates):
        real = os.path.realpath(path)
        if os.path.isdir(real) and not any(n == real or n.startswith(real + "/") for n in needed):
            hidden.add(real)
    return sorted(hidden)


def _project_root() -> str:
    """The folder holding this package (the checkout, or site-packages when installed)."""
    package = os.path.dirname(os.path.dirname(INSIDE_DIR))  # llm_coop_envs
    return os.path.realpath(os.path.dirname(package))


def _private_folders() -> dict[str, list[str]]:
    """Folders other users cannot traverse (e.g. /root) above the interpreter's paths, with those
    paths: a run under its own uid gets them revealed in its mount namespace (_confine.py)."""
    private: dict[str, list[str]] = {}
    for path in _interpreter_paths():
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            ancestor = "/" + "/".join(parts[:depth])
            if not os.stat(ancestor).st_mode & stat.S_IXOTH:
                private.setdefault(ancestor, []).append(path)
                break
    return private


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
    """How to start a warm interpreter whose runs get a scratch folder of `max_file_mb` each."""
    # Root gives every run a uid of its own: RLIMIT_NPROC is not enforced for root, and another
    # uid can neither signal the warm interpreter nor read what an earlier run left.
    fresh_uids = os.geteuid() == 0
    # bwrap's /tmp: where runs get no tmpfs of their own, it holds the run's folder and the last
    # one's (still being emptied), plus room for the warm interpreter's own files.
    scratch_mb = max_file_mb * 2 + 8
    hello = {"preload": list(preload), "fresh_uids": fresh_uids, "run_scratch_mb": max_file_mb,
             "nproc_base": 0 if fresh_uids else _user_tasks() + 64}
    allowed = allowed_packages(preload)
    if backend == "bwrap":
        argv = (_bwrap_base(scratch_mb << 20) + _view(preload)
                + _python_argv(os.path.join(HARNESS_DIR, os.path.basename(ZYGOTE_SCRIPT))))
        hello.update(pid_namespace=True, scratch_root="/tmp", path=[SITE_DIR] if allowed else [])
        return LaunchPlan("bwrap", argv, hello, None)
    scratch = tempfile.mkdtemp(prefix="llm-coop-sandbox-")
    os.chmod(scratch, 0o711)  # runs under another uid must reach their own subfolder
    hello.update(pid_namespace=False, scratch_root=scratch, path=[], hidden=_hidden_on_host(scratch),
                 private=_private_folders() if fresh_uids else {})
    project = _project_root()
    if not any(p == project or p.startswith(project + "/") for p in _interpreter_paths() + [scratch]):
        # the checkout is hidden but for the harness, which a run may still import lazily
        hello["private"][project] = [INSIDE_DIR]
    if allowed:
        site_dir = os.path.join(scratch, "site")
        os.mkdir(site_dir, 0o755)
        for name, path in allowed.items():
            os.symlink(path, os.path.join(site_dir, name))
        hello["path"] = [site_dir]
    return LaunchPlan("subprocess", _python_argv(ZYGOTE_SCRIPT), hello, scratch)
