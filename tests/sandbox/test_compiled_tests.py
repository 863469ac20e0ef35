"""Test snippets compiled once by the caller (_compiled.py) judge exactly like snippets the judge
compiles itself, and the judge ignores code made by another interpreter version."""

from __future__ import annotations

from llm_coop_envs.sandbox import run_tests
from llm_coop_envs.sandbox.inside import _compiled

PROGRAM = "LIMIT = 3\ndef f(x):\n    return x * 2\n"
TESTS = ["assert candidate(2) == 4", "assert f(LIMIT) == 6", "assert candidate(1) == 3",
         "assert candidate(", "import math\nassert math.isqrt(candidate(8)) == 4"]


def _verdicts(result) -> list[tuple]:
    return [(t.status, t.error_type) for t in result.tests]


def test_packed_suite_matches_compiling_from_the_text() -> None:
    suite = _compiled.pack_suite(TESTS)
    for index, source in enumerate(TESTS):
        unpacked = _compiled.unpack(suite, index)
        if index == 3:
            assert unpacked is None  # does not compile: left to the judge, which reports it
            continue
        code, names = unpacked
        expected_code, expected_names = _compiled.compile_test(index, source)
        assert names == expected_names and code.co_filename == expected_code.co_filename
        assert code.co_code == expected_code.co_code
    assert _compiled.unpack({**suite, "magic": "00"}, 0) is None
    assert _compiled.unpack(None, 0) is None and _compiled.unpack(suite, len(TESTS)) is None


def test_judge_compiles_itself_when_the_magic_differs(cfg, monkeypatch) -> None:
    packed = run_tests(PROGRAM, TESTS, "f", cfg)
    monkeypatch.setattr(_compiled, "MAGIC", "not this interpreter")
    own = run_tests(PROGRAM, TESTS, "f", cfg)
    assert _verdicts(packed) == _verdicts(own)
    assert _verdicts(own)[:3] == [("passed", None), ("passed", None), ("failed", "AssertionError")]
    assert _verdicts(own)[3][0] == "error" and _verdicts(own)[4] == ("passed", None)
