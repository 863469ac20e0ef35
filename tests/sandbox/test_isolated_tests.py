"""SandboxConfig(isolate_tests=True): each test in a child of its own, on both backends.

Nothing one test's run did reaches the next (a global, a file in the scratch folder or /dev/shm, a
replaced builtin, a process left running), so the verdicts do not depend on the tests' order; a
program that attacks the run's first process (which forks the children) only ends its own run.
"""

from __future__ import annotations

import pytest

from llm_coop_envs.sandbox import SandboxConfig, run_tests

BACKENDS = ["bwrap", "subprocess"]

# f() returns how many earlier calls left their mark; 0 in every test when each test is fresh.
MARKS = {
    "global": "_N = [0]\ndef f():\n    _N[0] += 1\n    return _N[0] - 1\n",
    "file": ("import os\ndef f():\n    n = len(os.listdir('.'))\n"
             "    open(f'mark{n}', 'w').close()\n    return n\n"),
    "shm": ("import os\ndef f():\n    n = len(os.listdir('/dev/shm'))\n"
            "    open(f'/dev/shm/mark{n}', 'w').close()\n    return n\n"),
    "builtin": ("import builtins\ndef f():\n    n = getattr(builtins, 'zq_marks', 0)\n"
                "    builtins.zq_marks = n + 1\n    return n\n"),
    "process": ("import os, socket, time\n"
                "def f():\n    probe = socket.socket(socket.AF_UNIX)\n    try:\n"
                "        probe.connect('\\0zq_isolated_probe')\n        return 1\n    except OSError:\n        pass\n"
                "    ready, done = os.pipe()\n    if os.fork() == 0:\n"
                "        server = socket.socket(socket.AF_UNIX)\n        server.bind('\\0zq_isolated_probe')\n"
                "        server.listen(8)\n        os.write(done, b'x')\n        time.sleep(60)\n        os._exit(0)\n"
                "    os.read(ready, 1)\n    return 0\n"),
}
TESTS = ["assert f() == 0"] * 4


def _config(backend: str, isolate: bool) -> SandboxConfig:
    return SandboxConfig(backend=backend, isolate_tests=isolate, timeout_s=5.0, test_timeout_s=1.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mark", list(MARKS))
def test_no_test_sees_what_an_earlier_one_left(mark, backend):
    isolated = run_tests(MARKS[mark], TESTS, "f", _config(backend, True))
    assert isolated.status == "ok" and isolated.passed == len(TESTS), isolated
    shared = run_tests(MARKS[mark], TESTS, "f", _config(backend, False))  # the control
    assert shared.passed == 1, shared


@pytest.mark.parametrize("backend", BACKENDS)
def test_verdicts_do_not_depend_on_the_order(backend):
    program = "_SEEN = []\ndef f(x):\n    _SEEN.append(x)\n    return len(_SEEN) == 1 and x % 2 == 0\n"
    tests = [f"assert f({x})" for x in (2, 3, 4, 5, 6)]
    forward = run_tests(program, tests, "f", _config(backend, True))
    backward = run_tests(program, tests[::-1], "f", _config(backend, True))
    assert [t.status for t in forward.tests] == [t.status for t in backward.tests][::-1]
    assert forward.passed == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_honest_program_gets_the_same_result(backend):
    program = "import math\ndef f(x):\n    return math.isqrt(x)\n"
    tests = ["assert f(16) == 4", "assert f(17) == 4", "assert f(0) == 1", "assert f(-1) == 0"]
    shared, isolated = (run_tests(program, tests, "f", _config(backend, i)) for i in (False, True))
    assert [t.status for t in isolated.tests] == [t.status for t in shared.tests]
    assert [t.error_type for t in isolated.tests] == [t.error_type for t in shared.tests]
    assert isolated.passed == 2


ATTACKS = {
    # the run's first process is the parent of the test's child: killing it ends the run
    "kills the process that forks the tests": "import os\ndef f():\n    os.kill(os.getppid(), 9)\n    return 0\n",
    "stops it": "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGSTOP)\n    return 0\n",
    # a folder its own uid cannot enter: the scratch folder cannot be emptied, the run ends
    "leaves a folder it cannot empty": ("import os\ndef f():\n    os.makedirs('a/b', exist_ok=True)\n"
                                        "    os.chmod('a', 0)\n    return 0\n"),
    "exits in a test": "import sys\ndef f():\n    sys.exit(0)\n",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_on_the_isolation_ends_no_better_than_the_first_test(attack, backend):
    result = run_tests(ATTACKS[attack], TESTS, "f", _config(backend, True))
    assert result.passed <= 1, result
    assert result.duration_s < 8.0
    # the next run is unharmed
    assert run_tests(MARKS["global"], TESTS, "f", _config(backend, True)).passed == len(TESTS)
