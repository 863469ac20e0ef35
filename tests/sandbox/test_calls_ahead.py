"""Calls sent ahead in one frame (tests of the form `assert candidate(<literals>) == ...`) judge
exactly like the same calls made one round trip at a time. Each test is written twice: with
literal arguments (sent ahead) and with its arguments in a variable (one call at a time)."""

from __future__ import annotations

import ast

import pytest

from llm_coop_envs.sandbox import run_tests
from llm_coop_envs.sandbox.inside import _compiled

COUNTER = "n = 0\ndef f(x):\n    global n\n    n += 1\n    return n + x\n"
MIXED = """
import os, sys
def f(x):
    if x == 'loop':
        while True:
            pass
    if x == 'raise':
        raise KeyError('no')
    if x == 'exit':
        sys.exit(3)
    if x == 'die':
        os._exit(0)
    if x == 'object':
        return object()
    return x
"""


def _one_at_a_time(tests: list[str]) -> list[str]:
    """The same tests, their call arguments moved into a variable (never sent ahead)."""
    out = []
    for test in tests:
        tree = ast.parse(test)
        call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and getattr(n.func, "id", None) == "candidate")
        args = ", ".join(ast.unparse(a) for a in call.args)
        out.append(f"_args = ({args},)\n" + test.replace(ast.unparse(call), "candidate(*_args)"))
    return out


def _verdicts(result) -> list[tuple]:
    return [(t.status, t.error_type) for t in result.tests]


def _same_both_ways(program: str, tests: list[str], cfg) -> tuple:
    assert all(_compiled.literal_call(ast.parse(t)) is not None for t in tests)
    assert all(_compiled.literal_call(ast.parse(t)) is None for t in _one_at_a_time(tests))
    ahead = run_tests(program, tests, "f", cfg)
    single = run_tests(program, _one_at_a_time(tests), "f", cfg)
    assert (ahead.status, _verdicts(ahead)) == (single.status, _verdicts(single))
    return ahead.status, _verdicts(ahead)


def test_calls_keep_their_order_and_the_programs_state(cfg) -> None:
    tests = [f"assert candidate(0) == {i}" for i in (1, 2, 3)] + ["assert candidate(10) == 99"]
    status, verdicts = _same_both_ways(COUNTER, tests, cfg)
    assert status == "ok" and [v[0] for v in verdicts] == ["passed"] * 3 + ["failed"]


def test_a_timeout_or_exception_in_one_call_leaves_the_others_theirs(cfg) -> None:
    tests = ["assert candidate(1) == 1", "assert candidate('loop') is None",
             "assert candidate('raise') == 1", "assert candidate('object') == 1",
             "assert candidate(2) == 2"]
    status, verdicts = _same_both_ways(MIXED, tests, cfg)
    assert verdicts == [("passed", None), ("timeout", "TimeoutError"), ("error", "KeyError"),
                        ("failed", "NotPlainResult"), ("passed", None)]


@pytest.mark.parametrize("how", ["exit", "die"])
def test_a_run_that_ends_in_one_call_answers_none_after_it(cfg, how) -> None:
    tests = ["assert candidate(1) == 1", f"assert candidate('{how}') == 1", "assert candidate(2) == 2"]
    status, verdicts = _same_both_ways(MIXED, tests, cfg)
    assert verdicts[0] == ("passed", None) and status != "ok"
    assert all(v[0] != "passed" for v in verdicts[1:])


def test_only_single_unconditional_literal_calls_are_sent_ahead() -> None:
    def call(source: str):
        return _compiled.literal_call(ast.parse(source))

    assert call("x = 1\nassert abs(candidate(1.5, [2], k='a') - 3) < 1e-6") == ((1.5, [2]), {"k": "a"})
    for source in ["assert candidate(x) == 1", "assert f(1) or candidate(2)",
                   "assert candidate(1) == candidate(2)", "assert candidate(*[1])",
                   "assert [candidate(i) for i in (1, 2)]", "assert candidate(1)\nx = 2",
                   "f = candidate\nassert f(1)", "assert True, candidate(1)"]:
        assert call(source) is None, source
