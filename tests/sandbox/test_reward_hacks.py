"""Programs that try to be paid without solving the task."""

from __future__ import annotations

import pytest

from llm_coop_envs.sandbox import run_tests

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
