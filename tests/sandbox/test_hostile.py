"""Hostile programs: each must be contained on every backend.

After each run: the caller is alive and its sandbox still works, the program earns nothing, no file
appeared outside the sandbox, no process of the run survived, nothing reached the network.
"""

from __future__ import annotations

import dataclasses
import os
import uuid

import pytest

from llm_coop_envs.sandbox import run_tests

from . import hostile
from .conftest import skip_where_runs_share_the_callers_uid
from .sandbox_watch import Listener, marked_processes, run_processes

# TARGET, PORT and MARKER are filled in per test. No program defines a correct `f`, so any
# passing test would mean the sandbox was fooled.
HOSTILE = {
    "infinite_loop": "while True:\n    pass",
    "sigterm_ignored": ("import signal\nfor s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT):\n"
                        "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass"),
    "sleep_forever": "import time\ntime.sleep(10**6)",
    "fork_bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                  "        pass"),
    "memory_bomb": "x = []\nwhile True:\n    x.append(bytearray(10**7))",
    "disk_fill": ("i = 0\nwhile True:\n    with open(f'fill{i}', 'wb') as f:\n"
                  "        f.write(b'x' * 10**6)\n    i += 1"),
    "big_file": "with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 10**6)",
    "output_flood": "import sys\nwhile True:\n    print('x' * 10000)\n    print('y' * 10000, file=sys.stderr)",
    "deep_recursion": ("import sys\nsys.setrecursionlimit(10**8)\ndef r(n):\n    return r(n + 1) + 1\n"
                       "r(0)"),
    "ctypes_segfault": "import ctypes\nctypes.string_at(0)",
    "thread_swarm": ("import threading, time\nwhile True:\n"
                     "    threading.Thread(target=time.sleep, args=(100,)).start()"),
    "write_outside": "open('TARGET', 'w').write('escaped')",
    "write_outside_shell": ("import os\nos.system('echo escaped > TARGET')\n"
                            "os.system('echo escaped > /TARGET_NAME')\n"
                            "raise SystemExit(1)"),
    "network": "import socket\nsocket.socket().connect(('127.0.0.1', PORT))",
    "kill_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
    "kill_group": "import os, signal\nos.killpg(0, signal.SIGKILL)",
    "kill_everything": "import os, signal\nos.kill(-1, signal.SIGKILL)",
    "daemon": ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
               "        os.execv('/bin/sh', ['sh', '-c', 'while :; do sleep 0.05; done; : MARKER'])\n"
               "    os._exit(0)\ntime.sleep(0.3)"),
    "daemon_after_tests": ("import os, atexit\n"
                           "def f():\n    if os.fork() == 0:\n        os.setsid()\n"
                           "        os.execv('/bin/sh', ['sh', '-c', 'sleep 30; : MARKER'])\n"
                           "    return 0\n"),
    "early_exit": "import os\nos._exit(0)",
    "sys_exit": "import sys\nsys.exit(0)",
}
TESTS = ["assert candidate() == 42"]


def _fill(code: str, target: str, port: int, marker: str) -> str:
    code = code.replace("TARGET_NAME", os.path.basename(target)).replace("TARGET", target)
    code = code.replace("PORT", str(port)).replace("MARKER", marker)
    return code if "def f()" in code else code + "\ndef f():\n    return 0\n"


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_is_contained(name, backend, hostile_cfg, tmp_path, listener) -> None:
    isolated_network = "network" in hostile.isolation(backend)
    if name == "network" and not isolated_network:
        pytest.skip(f"{backend} has no network namespace here (test_fallback_limits.py)")
    if name in UNCONFINED_AS_AN_ORDINARY_USER:
        skip_where_runs_share_the_callers_uid(backend, name)
    marker = f"hostile-{uuid.uuid4().hex}"
    target = tmp_path / f"escaped-{marker}"
    program = _fill(HOSTILE[name], str(target), listener.port, marker)

    # Programs that end on their own get a wall clock no loaded machine reaches, so that their
    # exact status (MemoryError, crash, ...) is checked, not a timeout that load can cause first.
    cfg = hostile_cfg if name in ENDS_BY_TIMEOUT else dataclasses.replace(
        hostile_cfg, timeout_s=SELF_ENDING_TIMEOUT_S, test_timeout_s=SELF_ENDING_TIMEOUT_S)
    result = run_tests(program, TESTS, "f", cfg)

    assert result.passed == 0, result
    expected = EXPECTED_STATUS.get(name, {result.status})
    if name == "kill_parent" and os.geteuid() != 0:
        # As an ordinary user the run shares the forking side's uid and kills it (documented):
        # only its own run ends, as crashed; the healthy run below gets a fresh interpreter. Where
        # the forking side is the PID namespace's init (subprocess), the kernel drops the signal.
        expected = {"crashed"} if backend != "subprocess" else {"ok"}
    assert result.status in expected, result
    if name in EXPECTED_ERROR_TYPE:
        assert result.error_type == EXPECTED_ERROR_TYPE[name], result
    assert result.duration_s < cfg.timeout_s + 1.0
    assert not target.exists()
    assert not os.path.exists(f"/{target.name}")
    assert run_processes() == []
    assert marked_processes(marker) == []
    if isolated_network:
        assert listener.connections == 0
    if backend == "bwrap":
        assert not os.path.exists(f"/tmp/{target.name}")
    healthy = run_tests("def f():\n    return 42\n", TESTS, "f", cfg)
    assert healthy.status == "ok" and healthy.passed == 1, healthy


# The opt-in without a file view, as an ordinary user, shares the caller's uid: it writes where the
# caller may, and kill(-1) reaches every process of the caller (pytest itself).
UNCONFINED_AS_AN_ORDINARY_USER = {"write_outside", "write_outside_shell", "kill_everything"}

# Programs that only end by being killed at the wall clock; every other one ends by itself.
ENDS_BY_TIMEOUT = {"infinite_loop", "sigterm_ignored", "sleep_forever", "fork_bomb", "disk_fill",
                   "big_file", "output_flood", "thread_swarm", "deep_recursion"}
SELF_ENDING_TIMEOUT_S = 30.0

# How the run ends, where that is certain; C-stack depth decides whether deep recursion ends as
# a crash (segfault), an error (MemoryError) or a timeout, all of them contained.
EXPECTED_STATUS = {
    "infinite_loop": {"timeout"}, "sigterm_ignored": {"timeout"}, "sleep_forever": {"timeout"},
    "memory_bomb": {"error"}, "deep_recursion": {"crashed", "error", "timeout"},
    "ctypes_segfault": {"crashed"}, "early_exit": {"crashed"}, "sys_exit": {"error"},
    "kill_group": {"crashed"}, "write_outside": {"error"}, "kill_parent": {"error"},
    "output_flood": {"timeout"},
}
EXPECTED_ERROR_TYPE = {"memory_bomb": "MemoryError", "sys_exit": "SystemExit",
                       "ctypes_segfault": "Killed", "early_exit": "EarlyExit"}


def test_output_is_capped(hostile_cfg) -> None:
    result = run_tests(_fill(HOSTILE["output_flood"], "", 0, ""), TESTS, "f", hostile_cfg)
    cap = hostile_cfg.max_output_bytes
    assert len(result.stdout.encode()) < cap + 100 and len(result.stderr.encode()) < cap + 100
    assert "bytes dropped" in result.stdout


def test_environment_of_the_caller_is_not_visible(hostile_cfg, monkeypatch) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("LLM_COOP_SECRET", secret)
    program = ("import os\nprint(dict(os.environ))\n"
               "for p in os.listdir('/proc'):\n"
               "    try:\n        print(open('/proc/' + p + '/environ', 'rb').read())\n"
               "    except OSError:\n        pass\n"
               "def f():\n    return 0\n")
    result = run_tests(program, TESTS, "f", hostile_cfg)
    assert result.status == "ok" and result.passed == 0
    assert secret not in result.stdout + result.stderr
    assert "LLM_COOP_SECRET" not in result.stdout + result.stderr
