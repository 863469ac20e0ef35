"""run_variants: several programs on the same tests in one request, each judged as a run of its own.

Each variant's result is what run_tests (isolate_tests) gives that program alone; no variant finds
what another left (a global, a file, /dev/shm, a builtin, a process); a variant that loops, crashes
or exits ends only itself; one that kills the run's first process makes only the later variants
fail; the request's budget and skip_after_timeout stop variants, which then count as timed out.
"""

from __future__ import annotations

import time

import pytest

from llm_coop_envs.sandbox import SandboxConfig, run_tests
from llm_coop_envs.sandbox.variants import run_variants
from tests.sandbox.test_isolated_tests import MARKS

BACKENDS = ["bwrap", "subprocess"]
TESTS = [f"assert candidate({i}) == {i + 1}" for i in range(4)]
PROGRAMS = {
    "right": "def f(x):\n    return x + 1\n",
    "wrong": "def f(x):\n    return 0\n",
    "right_then_wrong": "def f(x):\n    return x + 1 if x < 2 else 0\n",
    "loops": "def f(x):\n    while True:\n        pass\n",
    "syntax": "def f(x) return\n",
    "raises_on_load": "raise ValueError('no')\n",
    "prints": "def f(x):\n    print('hi' * 1000)\n    return x + 1\n",
}


def _config(backend: str, stop: bool = True, timeout_s: float = 1.0) -> SandboxConfig:
    return SandboxConfig(backend=backend, isolate_tests=True, stop_at_failure=stop,
                         timeout_s=timeout_s, test_timeout_s=timeout_s * 0.3)


def _summary(result) -> tuple:
    return result.status, result.error_type, tuple(t.status for t in result.tests)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stop", [True, False])
def test_each_variant_is_judged_as_a_run_of_its_own(backend, stop):
    config = _config(backend, stop)
    variants = [(p, "f") for p in PROGRAMS.values()] + [(PROGRAMS["right"], "g")]
    results = run_variants(variants, TESTS, config)
    alone = [run_tests(p, TESTS, e, config) for p, e in variants]
    assert [_summary(r) for r in results] == [_summary(r) for r in alone]
    assert all(r.stdout == "" and r.isolation for r in results)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variant_that_exits_ends_only_itself(backend):
    exits = "import os\ndef f(x):\n    os._exit(3)\n"
    system_exit = "import sys\ndef f(x):\n    sys.exit(1)\n"
    right = (PROGRAMS["right"], "f")
    results = run_variants([(exits, "f"), right, (system_exit, "f"), right], TESTS, _config(backend))
    assert [r.status for r in results] == ["crashed", "ok", "error", "ok"]
    assert results[2].error_type == "SystemExit" and results[1].all_passed and results[3].all_passed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mark", list(MARKS))
def test_no_variant_sees_what_another_left(mark, backend):
    results = run_variants([(MARKS[mark], "f")] * 3, ["assert f() == 0"] * 2, _config(backend, timeout_s=5.0))
    assert [r.passed for r in results] == [2, 2, 2], results


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variant_that_kills_the_first_process_fails_only_those_after_it(backend):
    kills = "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return x + 1\n"
    results = run_variants([(PROGRAMS["right"], "f"), (kills, "f"), (PROGRAMS["right"], "f")], TESTS,
                           _config(backend))
    assert results[0].all_passed
    assert results[1].status == "crashed" and results[2].status == "crashed"
    assert results[2].passed == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_budget_stops_the_request(backend):
    started = time.monotonic()
    results = run_variants([(PROGRAMS["loops"], "f")] * 6 + [(PROGRAMS["right"], "f")], TESTS,
                           _config(backend, timeout_s=0.5), budget_s=0.2)
    assert time.monotonic() - started < 2.0
    assert results[0].tests[0].status == "timeout"  # stopped at its test's limit
    assert [r.status for r in results[2:]] == ["timeout"] * 5  # the budget spent: not started
    assert all(t.status == "not_run" for r in results[2:] for t in r.tests)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_timeout_skips_the_rest_of_its_group_only(backend):
    from llm_coop_envs.sandbox.variants import run_variants_batch
    right, loops = (PROGRAMS["right"], "f"), (PROGRAMS["loops"], "f")
    job = ([right, loops, right, right, right], TESTS, "", (1, 4))
    started = time.monotonic()
    [results] = run_variants_batch([job], _config(backend, timeout_s=0.3), workers=1)
    assert time.monotonic() - started < 2.0
    assert results[1].tests[0].status == "timeout"
    assert [r.status for r in results[2:4]] == ["timeout", "timeout"]  # skipped
    assert results[2].tests[0].status == "not_run" and results[4].all_passed
