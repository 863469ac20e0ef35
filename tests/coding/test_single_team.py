import pytest

import llm_coop_envs
from llm_coop_envs.testing import check_env

SOLUTION = (
    "```python\ndef is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))\n\n"
    "def x_or_y(n, x, y):\n    return x if is_prime(n) else y\n```"
)


@pytest.fixture(scope="module")
def solo_env():
    return llm_coop_envs.make("coop_humaneval-v0", team="single", split="all")


def test_single_team_has_one_agent_and_passes_check_env(solo_env):
    assert solo_env.possible_agents == ["main"]
    check_env(solo_env)


def test_single_agent_prompt_asks_for_the_whole_solution(solo_env):
    observations, _ = solo_env.reset(options={"task_id": "CoopHumanEval/0"})
    assert "x_or_y" in observations["main"] and "helper agent" not in observations["main"]


def test_single_agent_levels_reward_keeps_main_levels_only(solo_env):
    solo_env.reset(options={"task_id": "CoopHumanEval/0"})
    _, rewards, terminations, _, infos = solo_env.step({"main": SOLUTION})
    assert rewards["main"] == pytest.approx(2.1)
    assert set(infos["main"]["reward_components"]) == {"main_defined", "syntax", "tests"}
    assert infos["main"]["solved"] and terminations["main"]


def test_unknown_team_is_rejected():
    with pytest.raises(ValueError, match="team must be one of"):
        llm_coop_envs.make("mbpp-v1", team="trio")
