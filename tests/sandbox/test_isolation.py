"""The hostile suite (hostile.py) on each backend, as the caller (root in CI) and as an ordinary user.

Expected containment per backend and privilege is the table in docs/sandbox.md: every check it
lists as contained is asserted here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from llm_coop_envs.sandbox import SandboxConfig, _cgroup, run_tests
from llm_coop_envs.sandbox.inside import _seccomp, _trash
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.backend import bwrap_works
from llm_coop_envs.sandbox.worker import Worker

from . import hostile
from .paths import private_ancestor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOBODY = 65534
NOBODY_GID = 65533
# Without root, the subprocess backend runs in a user namespace of its own where the kernel allows
# one; elsewhere it is refused, and its opt-in by name, "unconfined", runs under the caller's uid
# with the host's file system.
WEAK_FOR_AN_ORDINARY_USER = {"unconfined": {"files_left_for_the_next_run", "project_and_data_files",
                                            "answer_key_elsewhere_on_the_host", "another_runs_scratch",
                                            "fresh_uid_per_run", "shared_memory_between_runs",
                                            "path_socket_between_runs"},
                             "bwrap": {"fresh_uid_per_run"},
                             # in a user namespace of its own (view_mode "user"): one uid, as bwrap
                             "subprocess": {"fresh_uid_per_run"}}


@pytest.mark.skipif(os.geteuid() != 0, reason="the caller's own run is the ordinary-user case below")
@pytest.mark.parametrize("check", sorted(hostile.CHECKS))
def test_contained_under_root(backend: str, check: str) -> None:
    why = hostile.skip_reason(backend, check)
    if why:
        pytest.skip(f"not promised here: {why}")
    assert hostile.CHECKS[check](backend), f"{check} escaped on {backend} under root"


@pytest.mark.skipif(os.geteuid() == 0, reason="root: test_contained_under_root")
@pytest.mark.parametrize("check", sorted(hostile.CHECKS))
def test_contained_as_the_calling_ordinary_user(backend: str, check: str) -> None:
    """The same suite when pytest itself runs as an ordinary user (bwrap in a user namespace, or
    the opt-in `unconfined`: `subprocess` is refused there)."""
    if check in WEAK_FOR_AN_ORDINARY_USER[backend]:
        pytest.skip(f"documented as not contained on {backend} for an ordinary user")
    why = hostile.skip_reason(backend, check)
    if why:
        pytest.skip(f"not promised here: {why}")
    assert hostile.CHECKS[check](backend), f"{check} escaped on {backend} as an ordinary user"



def _as_nobody(backend: str, tmp: str) -> dict:
    """Runs the suite as uid 65534. When the interpreter lives below a folder only root may
    traverse (/root/.pyenv), a private mount namespace makes just that folder traversable."""
    prefix = os.path.realpath(sys.base_prefix)
    ancestor = private_ancestor(prefix)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT, "LANG": "C.UTF-8",
           "LLM_COOP_DATA_DIR": os.environ.get("LLM_COOP_DATA_DIR", ""), "HOME": "/nonexistent",
           "TMPDIR": tmp}
    # A gid other than the uid: inside bwrap's user namespace only the caller's own ids are mapped
    # (a run's scratch owned by gid = uid once failed there, and runs silently lost their tmpfs).
    run = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY_GID}", "--clear-groups", "--",
           sys.executable, "-m", "tests.sandbox.hostile", backend]
    if ancestor:
        script = ('set -e; mount --make-rprivate /; t=$(mktemp -d); mount --bind "$1" "$t"; '
                  'mount -t tmpfs -o mode=0755 tmpfs "$2"; mkdir -p "$1"; mount --move "$t" "$1"; rmdir "$t"; '
                  'shift 2; exec "$@"')
        run = ["unshare", "--mount", "sh", "-c", script, "sh", prefix, ancestor] + run
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an ordinary user")
@pytest.mark.skipif(not (shutil.which("setpriv") and shutil.which("unshare")), reason="util-linux missing")
def test_contained_as_an_ordinary_user(backend: str) -> None:
    if private_ancestor(os.path.join(ROOT, "tests")):  # ROOT itself may be private (mktemp -d)
        pytest.skip(f"the checkout {ROOT} is not readable by uid {NOBODY}")
    tmp = tempfile.mkdtemp(prefix="nobody-")
    os.chown(tmp, NOBODY, NOBODY)
    try:
        contained = _as_nobody(backend, tmp)
        if "refused" in contained:  # no user namespaces either: no file view, so the opt-in
            assert backend == "subprocess", contained
            refused = contained["refused"]
            assert "backend='unconfined'" in refused and "\n" not in refused, refused
            backend = "unconfined"
            contained = _as_nobody(backend, tmp)
        assert os.listdir(tmp) == [], "the workers' scratch folders were not removed"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    weak = WEAK_FOR_AN_ORDINARY_USER[backend]
    escaped = {c for c, ok in contained.items() if not ok}
    assert escaped <= weak, contained  # the weak ones are documented, not promised either way


def test_seccomp_numbers_match_the_kernel_headers() -> None:
    header = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
    if not os.path.exists(header):
        pytest.skip("no x86_64 kernel headers")
    numbers = {}
    with open(header) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("__NR_"):
                numbers[parts[1][5:]] = int(parts[2])
    for name, number in {**_seccomp.DENIED_X86_64, "clone": _seccomp.CLONE_X86_64,
                         "clone3": _seccomp.CLONE3_X86_64}.items():
        assert numbers.get(name) == number, name


def test_bwrap_is_usable_here_or_the_suite_says_so() -> None:
    if not bwrap_works():
        pytest.skip("bubblewrap unusable: the bwrap rows of the suite were not run")


def test_concurrent_workers_have_cpu_cgroups_of_their_own(backend: str) -> None:
    """CPU fairness: sibling cgroups share the CPU equally, however many processes each has."""
    if _cgroup._parent() is None:
        pytest.skip("no writable cgroup v1 cpu hierarchy here: documented bound is RLIMIT_CPU/NPROC")
    workers = [Worker(backends.plan(backend, (), 4)) for _ in range(2)]
    try:
        groups = set()
        for worker in workers:
            worker.handshake()
            with open(f"/proc/{worker.proc.pid}/cgroup") as f:
                fields = [line.rstrip("\n").split(":", 2) for line in f]
            groups |= {path for _, controllers, path in fields if "cpu" in controllers.split(",")}
        assert len(groups) == 2 and all("llm-coop-sandbox-" in g for g in groups), groups
    finally:
        for worker in workers:
            worker.close()
    assert not any(os.path.exists(os.path.dirname(w.cgroup)) for w in workers), "cgroups removed"


def _deep_tree(top: str, depth: int, files: int) -> None:
    """`files` files at the top and a chain of `depth` folders, the deepest without any rights."""
    os.mkdir(top)
    for i in range(files):
        open(os.path.join(top, f"f{i}"), "w").close()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.fchmod(fd, 0)
    os.close(fd)


def test_remove_tree_deletes_any_depth(tmp_path) -> None:
    top = str(tmp_path / "left")
    _deep_tree(top, depth=3000, files=500)  # deeper than PATH_MAX and the recursion limit
    _trash.remove_tree(top)
    assert not os.path.exists(top)


def test_trash_is_emptied_only_while_nothing_waits(tmp_path) -> None:
    trash = _trash.Trash(str(tmp_path))
    _deep_tree(str(tmp_path / "run-1"), depth=50, files=1000)
    trash.add(str(tmp_path / "run-1"))
    trash.empty_until(lambda: True)  # a request waits: stops after one batch of entries
    assert len(os.listdir(os.path.join(trash.path, "1"))) > 900
    trash.empty_until(lambda: False)
    assert os.listdir(trash.path) == []


JUDGE_PROBE = '''
import os
def _probe(pid):
    reached = []
    try:
        os.kill(pid, 0)
        reached.append("signal")
    except PermissionError:
        pass
    try:
        with open(f"/proc/{pid}/mem", "rb") as mem:
            mem.read(1)
        reached.append("memory")
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status)
    except FileNotFoundError:  # hidden: a run's /proc lists only its own uid's processes
        return reached, True, 1
    return reached, fields["Uid"].split()[0] != str(os.getuid()), int(fields["PPid"])
def f():
    # The run's first process is forked by the warm interpreter's forking side, whose parent is
    # the judge (outside the run's PID namespace on the subprocess backend: PID 1 is then the
    # forking side again).
    forking_side, other_uid, judge = _probe(os.getppid())
    judge_reached, judge_other_uid, _ = _probe(judge)
    return [forking_side, other_uid, judge_reached, judge_other_uid]
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="an ordinary user's run shares the judge's uid")
def test_the_judge_is_not_confined_with_the_run(backend: str) -> None:
    """The judge and the forking side keep the warm interpreter's uid: the run (a fresh uid) can
    neither signal nor read them, while the judge still answers with a verdict."""
    result = run_tests(JUDGE_PROBE, ["assert candidate() == [[], True, [], True]"], "f",
                       SandboxConfig(backend=backend))
    assert [t.status for t in result.tests] == ["passed"], result


_RUN_IN_CHECKOUT = """
from llm_coop_envs.sandbox import SandboxConfig, run_tests
for backend in {backends!r}:
    result = run_tests("def add(a, b):\\n    return a + b\\n", ["assert candidate(1, 2) == 3"], "add",
                       SandboxConfig(backend=backend))
    print(backend, result.status, [t.status for t in result.tests])
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the checkout is hidden only where runs get a namespace (root)")
def test_a_virtualenv_inside_the_checkout_still_runs_programs(tmp_path) -> None:
    """scripts/setup.sh puts .venv inside the checkout, whose folders the run cannot see: hiding the
    venv's site-packages must not trip over a folder that the hidden checkout already took away."""
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.join(ROOT, "llm_coop_envs"), checkout / "llm_coop_envs",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(checkout / ".venv")], check=True)
    python = str(checkout / ".venv" / "bin" / "python")
    deps = [p for p in sys.path if p.endswith("-packages")]  # the caller's installed dependencies
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), *deps])}
    names = ["subprocess"] + (["bwrap"] if bwrap_works() else [])
    done = subprocess.run([python, "-c", _RUN_IN_CHECKOUT.format(backends=names)], env=env, cwd=checkout,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    for name in names:
        assert f"{name} ok ['passed']" in done.stdout, done.stdout + done.stderr[-2000:]
