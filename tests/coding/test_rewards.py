"""Reward levels with their exact numbers, the execution reward and user reward callables."""

import math

import pytest

from llm_coop_envs.coding.reward import LEVEL_COMPONENTS
from llm_coop_envs.coding.task import CodingTask
from tests.coding.problems import (
    HELPER_DOUBLE_SUM, HELPER_SUM, MAIN_ALONE, MAIN_IGNORES, MAIN_USES, MAIN_WRAPS, rows,
)


@pytest.fixture(scope="module")
def task():
    return CodingTask(rows())


def score(task, helper, main):
    evaluation = task.evaluate(0, {"helper": helper, "main": main})
    assert tuple(evaluation.reward.components) == LEVEL_COMPONENTS, "every component is always present"
    assert math.isclose(evaluation.reward.total, sum(evaluation.reward.components.values()))
    return evaluation


def components(evaluation):
    return {k: round(v, 6) for k, v in evaluation.reward.components.items() if v}


def test_full_cooperation_earns_the_maximum(task):
    evaluation = score(task, HELPER_SUM, MAIN_USES)
    assert evaluation.reward.total == pytest.approx(4.0)
    assert evaluation.solved


def test_thin_wrapper_loses_the_wrapper_bonus(task):
    evaluation = score(task, HELPER_DOUBLE_SUM, MAIN_WRAPS)
    assert components(evaluation) == {
        "helper_defined": 0.4, "main_defined": 0.6, "syntax": 0.5, "tests": 1.0, "uses_helper": 0.5,
    }
    assert evaluation.reward.total == pytest.approx(3.0)


def test_assign_then_return_is_also_a_thin_wrapper(task):
    main = "def add_then_double(a, b):\n    r = aux(a, b)\n    return r\n"
    assert score(task, HELPER_DOUBLE_SUM, main).reward.total == pytest.approx(3.0)


def test_ignoring_the_return_value_is_penalised(task):
    evaluation = score(task, HELPER_SUM, MAIN_IGNORES)
    assert evaluation.reward.components["ignored_return"] == -0.5
    assert evaluation.reward.total == pytest.approx(3.5)


def test_not_calling_the_helper_earns_no_cooperation(task):
    assert components(score(task, HELPER_SUM, MAIN_ALONE)) == {
        "helper_defined": 0.4, "main_defined": 0.6, "syntax": 0.5, "tests": 1.0,
    }


def test_passing_the_helper_as_a_value_counts_as_calling_it(task):
    main = "def add_then_double(a, b):\n    f = aux\n    return f(a, b) * 2\n"
    assert score(task, HELPER_SUM, main).reward.total == pytest.approx(4.0)


def test_a_helper_named_in_another_unicode_form_still_counts_as_used(task):
    """Python reads identifiers in NFKC form: fullwidth ａｕｘ is the helper aux."""
    main = "def add_then_double(a, b):\n    return \uff41\uff55\uff58(a, b) * 2\n"
    assert score(task, HELPER_SUM, main).reward.total == pytest.approx(4.0)


def test_missing_helper_gives_no_helper_points_and_no_cooperation(task):
    main_with_own_aux = "def aux(a, b):\n    return a + b\n\n" + MAIN_USES
    evaluation = score(task, "I cannot help.", main_with_own_aux)
    assert components(evaluation) == {"main_defined": 0.6, "syntax": 0.5, "tests": 1.0}
    assert evaluation.solved, "main's own aux is kept when the helper defined none"


def test_helper_without_return_value_gets_no_structure_points(task):
    helper = "def aux(a, b):\n    print(a + b)\n"
    assert score(task, helper, MAIN_ALONE).reward.components["helper_defined"] == 0.0


def test_missing_main_stops_scoring(task):
    evaluation = score(task, HELPER_SUM, "Here is my answer: it adds and doubles.")
    assert components(evaluation) == {"helper_defined": 0.4}
    assert "missing" in evaluation.feedback["main"]


def test_syntax_error_stops_scoring_and_is_located(task):
    broken = "def add_then_double(a, b):\n    return (a + b *\n"
    evaluation = score(task, HELPER_SUM, broken)
    assert components(evaluation) == {"helper_defined": 0.4, "main_defined": 0.6}
    syntax = evaluation.details["syntax_error"]
    assert syntax["owner"] == "main" and syntax["line"] == 2 and syntax["col"] is not None
    assert "Syntax error in the main's code at line 2, column" in evaluation.feedback["main"]
    assert evaluation.details["sandbox"] is None, "code that does not compile is not run"


def test_each_assert_counts_on_its_own(task):
    half_right = "def add_then_double(a, b):\n    return a + b\n"  # right for (0,0) and (-1,1) only
    evaluation = score(task, HELPER_SUM, half_right)
    assert evaluation.reward.components["tests"] == pytest.approx(0.5)
    assert [t["status"] for t in evaluation.details["tests"]] == ["failed", "passed", "passed", "failed"]
    assert not evaluation.solved
    assert "- failed `assert candidate(1, 2) == 6` (wrong result)" in evaluation.feedback["main"]


def test_cooperation_needs_a_passing_test(task):
    wrong = "def add_then_double(a, b):\n    return aux(a, b) + 100\n"
    evaluation = score(task, HELPER_SUM, wrong)
    assert components(evaluation) == {"helper_defined": 0.4, "main_defined": 0.6, "syntax": 0.5}


def test_main_redefining_the_helper_is_dropped_and_reported(task):
    main = "def aux(a, b):\n    return 0\n\n" + MAIN_USES  # would fail every test if it replaced the helper's aux
    evaluation = score(task, HELPER_SUM, main)
    assert evaluation.reward.total == pytest.approx(4.0)
    assert evaluation.details["dropped_from_main"] == ["aux"]
    assert "ignored" in evaluation.feedback["main"]
    assert "return 0" not in evaluation.details["program"]


def test_helper_writing_the_entry_point_is_dropped(task):
    helper = HELPER_SUM + "\n```python\ndef add_then_double(a, b):\n    return 0\n```"
    evaluation = score(task, helper, MAIN_USES)
    assert evaluation.reward.total == pytest.approx(4.0)
    assert evaluation.details["dropped_from_helper"] == ["add_then_double"]
    assert "the main agent writes it" in evaluation.feedback["helper"]


def test_feedback_and_reward_are_deterministic(task):
    replies = {"helper": HELPER_SUM, "main": "def add_then_double(a, b):\n    return aux(a, b)\n"}
    first, second = task.evaluate(0, replies), task.evaluate(0, replies)
    assert first.reward == second.reward and dict(first.feedback) == dict(second.feedback)
    assert first.details["tests"] == second.details["tests"]


def test_execution_reward():
    task = CodingTask(rows(), reward="execution")
    full = task.evaluate(0, {"helper": HELPER_SUM, "main": MAIN_USES}).reward
    assert dict(full.components) == pytest.approx({"syntax": 0.2, "runs": 0.3, "tests": 0.4})
    half = task.evaluate(0, {"helper": "", "main": "def add_then_double(a, b):\n    return a + b\n"}).reward
    assert half.total == pytest.approx(0.2 + 0.3 + 0.2)
    crashing = "BROKEN = 1 / 0\n\n" + MAIN_ALONE  # kept (no call), fails at load time
    loads_badly = task.evaluate(0, {"helper": "", "main": crashing})
    assert dict(loads_badly.reward.components) == {"syntax": 0.2, "runs": 0.0, "tests": 0.0}
    assert "ZeroDivisionError" in loads_badly.feedback["main"]
    assert task.evaluate(0, {"helper": "", "main": ""}).reward.total == 0.0


def test_a_reward_function_reads_the_judgement_that_is_also_the_details():
    seen = {}

    def passed_tests(replies, context):
        seen.update(context)
        return float(context["passed"]) if context["sandbox"] is not None else -1.0

    task = CodingTask(rows(), reward=passed_tests)
    evaluation = task.evaluate(0, {"helper": HELPER_SUM, "main": MAIN_USES})
    assert evaluation.reward.total == 4.0 and dict(evaluation.reward.components) == {"custom": 4.0}
    assert seen["problem"]["task_id"] == "Toy/0" and seen["code"]["main"].startswith("def add_then_double")
    assert seen == dict(evaluation.details) and seen["helper_use"]["calls_helper"]
    assert task.evaluate(0, {"helper": "", "main": "nothing"}).reward.total == -1.0


def test_bad_reward_and_sandbox_arguments_say_how_to_fix_them():
    with pytest.raises(ValueError, match="levels"):
        CodingTask(rows(), reward="accuracy")
    with pytest.raises(TypeError, match="SandboxConfig"):
        CodingTask(rows(), sandbox={"timeout_s": 1})
    with pytest.raises(TypeError, match="returned"):
        CodingTask(rows(), reward=lambda replies, context: "high").evaluate(0, {"helper": "", "main": ""})


def test_feedback_names_each_agents_part_and_details_are_json(task):
    import json

    wraps = task.evaluate(0, {"helper": HELPER_DOUBLE_SUM, "main": MAIN_WRAPS})
    assert wraps.feedback["helper"].splitlines()[0] == "Helper: `aux` found."
    assert "only wraps `aux`" in wraps.feedback["main"]
    ignores = task.evaluate(0, {"helper": HELPER_SUM, "main": MAIN_IGNORES})
    assert "ignores its return value" in ignores.feedback["helper"]
    alone = task.evaluate(0, {"helper": "", "main": MAIN_ALONE})
    assert "no function found" in alone.feedback["helper"]
    unused = task.evaluate(0, {"helper": HELPER_SUM, "main": MAIN_ALONE})
    assert "does not call the helper's function" in unused.feedback["main"]
    details = json.loads(json.dumps(dict(unused.details)))
    assert details["parse"]["helper"]["origin"] == "fenced"
    assert details["tests"][0] == {"test": "assert candidate(1, 2) == 6", "public": False, "status": "passed", "error_type": None, "message": None,
                                  "fallback": False}
    assert details["sandbox"]["status"] == "ok"
