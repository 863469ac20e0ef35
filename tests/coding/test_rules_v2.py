"""The ``v2`` scoring rules: counterfactual cooperation, public-only feedback, example-free hidden tests."""

from __future__ import annotations

import ast
import time

import pytest

from llm_coop_envs.coding.extra_hidden import EXTRA_HIDDEN, OWN_REFERENCES
from llm_coop_envs.coding import public_tests
from llm_coop_envs.sandbox import SandboxConfig
from tests.coding.hostile_v2 import make

TASK = "coop_basics/t1/bonus_points"
HELPER = "def aux(score):\n    return score + 10\n"
HONEST = "def add_bonus_points(scores):\n    return [aux(s) for s in scores]\n"


def step(env, helper, main, task_id=TASK):
    env.reset(options={"task_id": task_id})
    _, rewards, _, _, infos = env.step({"helper": helper, "main": main})
    return rewards["main"], infos["main"]


@pytest.fixture(scope="module")
def basics():
    return make("coop_basics-v2", split="all", num_turns=2)


def test_the_quickstart_pair_needs_aux_and_earns_the_top_reward(basics):
    reward, info = step(basics, HELPER, HONEST)
    dependence = info["details"]["helper_dependence"]
    assert reward == pytest.approx(4.0)
    assert dependence["checked"] and dependence["needed"] and not dependence["aux_alone_passes"]
    assert set(dependence["stand_ins"].values()) == {"failed"} and dependence["stand_ins_passed"] == []
    assert dependence["pairings"] == {"main_with_reference_aux": True, "helper_with_reference_main": True}


def test_no_counterfactual_runs_when_a_hidden_test_fails_or_main_does_not_call_aux(basics):
    _, failing = step(basics, HELPER, "def add_bonus_points(scores):\n    return [aux(s) + 1 for s in scores]\n")
    _, solo = step(basics, HELPER, "def add_bonus_points(scores):\n    return [s + 10 for s in scores]\n")
    assert not failing["details"]["helper_dependence"]["checked"]
    assert not solo["details"]["helper_dependence"]["checked"]


def test_only_aux_is_the_helpers_function(basics):
    helper = HELPER + "\ndef plus_ten(s):\n    return s + 10\n"
    reward, info = step(basics, helper, "def add_bonus_points(scores):\n    return [plus_ten(s) for s in scores]\n")
    assert info["details"]["helper_functions"] == ["aux"]
    assert reward == pytest.approx(2.5)


def test_a_helper_shadowing_a_builtin_main_uses_is_dropped_and_reported(basics):
    helper = HELPER + "\ndef len(x):\n    return 3\n\ndef sorted(x):\n    return x\n"
    main = "def add_bonus_points(scores):\n    return [aux(s) for s in scores][:len(scores)]\n"
    basics.reset(options={"task_id": TASK})
    _, rewards, _, _, infos = basics.step({"helper": helper, "main": main})
    assert infos["main"]["details"]["dropped_shadowing"] == ["len"]  # main does not use sorted
    assert "builtin or standard-library names" in infos["helper"]["feedback"]
    assert rewards["main"] == pytest.approx(4.0)  # the program ran with the real len


def test_a_main_looping_under_every_stand_in_is_stopped_at_the_scaled_limit():
    env = make("coop_basics-v2", split="all", sandbox=SandboxConfig(timeout_s=10.0, test_timeout_s=3.0))
    main = ("def add_bonus_points(scores):\n    out = [aux(s) for s in scores]\n"
            "    while out and out[0] != scores[0] + 10:\n        pass\n    return out\n")
    started = time.monotonic()
    reward, info = step(env, HELPER, main)
    elapsed = time.monotonic() - started
    statuses = info["details"]["helper_dependence"]["stand_ins"]
    assert "timeout" in statuses.values() and "passed" not in statuses.values()
    assert reward == pytest.approx(4.0)  # it does need aux: every stand-in fails
    assert elapsed < 10.0  # twelve stand-ins at the full 10 s limit would take 60 s on two cores


def test_per_agent_rewards_apply_the_same_rule():
    env = make("coop_basics-v2", split="all", reward_mode="per_agent")
    env.reset(options={"task_id": TASK})
    identity = "def aux(v):\n    return v\n"
    main = "def add_bonus_points(scores):\n    scores = aux(scores)\n    return [s + 10 for s in scores]\n"
    _, rewards, _, _, infos = env.step({"helper": identity, "main": main})
    assert infos["main"]["agent_reward_components"]["uses_helper"] == 0.0
    assert rewards["main"] <= 2.1 + 1e-9  # main's own share of a correct solo reply


# ------------------------------------------------------------------------------------------- feedback
def test_feedback_comes_from_the_public_run_with_three_verdict_words(basics):
    main = "def add_bonus_points(scores):\n    raise KeyError('secret words')\n"
    _, info = step(basics, HELPER, main)
    feedback = info["feedback"]
    assert "Public examples: 0/1 passed." in feedback and "(error)" in feedback
    assert "KeyError" not in feedback and "secret" not in feedback and "idden" not in feedback
    env = basics
    problem = env.task.problems[env._episode.index]
    assert len(problem.public_tests) == 1


# ------------------------------------------------------------------------------------- hidden tests
@pytest.mark.parametrize("env_id", ["humaneval-v2", "coop_humaneval-v2", "mbpp-v2", "coop_basics-v2"])
def test_every_scored_problem_has_a_hidden_test_that_is_not_a_prompt_example(env_id):
    env = make(env_id, split="all")
    for i in range(len(env.task)):
        problem = env.task.problems[i]
        examples = public_tests.prompt_calls(problem.prompt, problem.entry_point) | public_tests.written_example_calls(
            problem.prompt, problem.entry_point)
        assert any(not public_tests.test_calls(t) & examples for t in problem.tests), problem.task_id


@pytest.mark.parametrize("task_id", ["HumanEval/68", "HumanEval/107"])
def test_input_output_examples_are_public_under_v2(task_id):
    v1, v2 = make("humaneval-v1", split="all"), make("humaneval-v2", split="all")
    labels = {}
    for name, env in (("v1", v1), ("v2", v2)):
        env.reset(options={"task_id": task_id})
        problem = env.task.problems[env._episode.index]
        labels[name] = ([t.label for t in problem.public_tests], [t.label for t in problem.tests])
    assert not labels["v1"][0] and labels["v2"][0]
    assert not set(labels["v2"][0]) & set(labels["v2"][1])


@pytest.mark.parametrize("key", list(EXTRA_HIDDEN))
def test_written_hidden_tests_agree_with_a_reference(key):
    dataset, task_id = key
    if key in OWN_REFERENCES:
        program, entry = OWN_REFERENCES[key], ast.parse(OWN_REFERENCES[key]).body[0].name
    else:
        env = make({"humaneval": "humaneval-v2", "coop_basics": "coop_basics-v2"}[dataset], split="all")
        env.reset(options={"task_id": task_id})
        row = env.task.problems[env._episode.index].row
        program = (row["prompt"] + row["canonical_solution"] if dataset == "humaneval"
                   else row["reference_helper"] + "\n" + row["reference_main"])
        entry = row["entry_point"]
    namespace: dict = {}
    exec(program, namespace)  # trusted: the dataset's reference or the one written beside the tests
    for test in EXTRA_HIDDEN[key]:
        exec(test, {"candidate": namespace[entry]})


def test_coop_humaneval_10_is_not_solved_by_a_table_of_its_docstring():
    env = make("coop_humaneval-v2", split="all")
    table = "def prime_fib(n):\n    return {1: 2, 2: 3, 3: 5, 4: 13, 5: 89}.get(n)\n"
    env.reset(options={"task_id": "CoopHumanEval/10"})
    _, rewards, _, _, infos = env.step({"helper": "", "main": table})
    assert infos["main"]["details"]["passed"] < infos["main"]["details"]["total"]


# ------------------------------------------------------------------------- honest work keeps the top
@pytest.mark.parametrize("env_id,kwargs", [("coop_basics-v2", {"split": "all"}),
                                           ("coop_procedural-v1", {"split": "test"}),
                                           ("coop_procedural-v1", {"split": "heldout_families"})])
def test_every_reference_pair_needs_aux_and_earns_the_top_reward(env_id, kwargs):
    task = make(env_id, **kwargs).task
    items = [(i, {"helper": task.problems[i].row["reference_helper"], "main": task.problems[i].row["reference_main"]})
             for i in range(len(task))]
    for (i, _), evaluation in zip(items, task.evaluate_many(items)):
        assert evaluation.reward.total == pytest.approx(4.0), (task.task_id(i), evaluation.details["helper_dependence"])


@pytest.mark.parametrize("env_id", ["coop_basics-v2", "coop_procedural-v1"])
def test_reference_pairs_earn_the_top_reward_on_every_turn(env_id):
    env = make(env_id, split="test", num_turns=3, stop_when_solved=False)
    for i in range(0, len(env.task), 11):
        row = env.task.problems[i].row
        env.reset(options={"task_id": row["task_id"]})
        while env.agents:
            _, rewards, _, _, infos = env.step({"helper": row["reference_helper"], "main": row["reference_main"]})
            assert rewards["main"] == pytest.approx(4.0), (row["task_id"], infos["main"]["turn"])


def test_the_three_verdict_words():
    env = make("coop_basics-v2", split="all", num_turns=2, sandbox=SandboxConfig(timeout_s=4.0, test_timeout_s=0.5))
    verdicts = {"wrong result": "return []", "error": "return 1 / 0", "time limit": "while True:\n        pass"}
    for word, body in verdicts.items():
        _, info = step(env, HELPER, f"def add_bonus_points(scores):\n    {body}\n")
        assert f"({word})" in info["feedback"] and "ZeroDivisionError" not in info["feedback"], info["feedback"]


def test_the_counterfactual_limit_is_scaled_and_bounded():
    from llm_coop_envs.coding.dependence import MIN_TIME_S, scaled_config

    config = SandboxConfig(timeout_s=10.0, test_timeout_s=3.0)
    assert scaled_config(config, 0.01).timeout_s == MIN_TIME_S
    assert scaled_config(config, 0.3).timeout_s == pytest.approx(1.0)  # 3x, rounded up to a multiple
    assert scaled_config(config, 100.0).timeout_s == 10.0 and scaled_config(config, 100.0).test_timeout_s == 3.0
