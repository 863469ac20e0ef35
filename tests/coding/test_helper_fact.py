"""A problem's ``helper_fact`` reaches the helper's prompt and never main's."""

import llm_coop_envs
from llm_coop_envs.coding.factory import coding_env

ROW = {
    "task_id": "fact/0", "entry_point": "boost", "helper_fact": "The bonus rule: a roll is worth roll * 5 + 8.",
    "prompt": 'def boost(rolls):\n    """Return the bonus value (what aux returns) of every roll."""\n',
    "helper": {"signature": "def aux(roll):", "doc": "Return the bonus value of roll."},
    "test": "def check(candidate):\n    assert candidate([1]) == [13]\n",
}


def test_only_the_helper_is_told_the_fact():
    for protocol in ("parallel", "sequential"):
        env = coding_env("facts", [ROW], split="all", name="facts", rules="v1", protocol=protocol)
        observations, _ = env.reset(options={"index": 0})
        assert ROW["helper_fact"] in observations["helper"]
        assert ROW["helper_fact"] not in observations["main"] and "5 + 8" not in observations["main"]


def test_procedural_facts_stay_with_the_helper():
    env = llm_coop_envs.make("coop_procedural-v0", split="test")
    with_fact = [i for i in range(len(env.task)) if env.task.problems[i].row["helper_fact"]][:5]
    assert with_fact
    for index in with_fact:
        observations, _ = env.reset(options={"index": index})
        fact = env.task.problems[index].row["helper_fact"]
        assert fact in observations["helper"] and fact not in observations["main"]
