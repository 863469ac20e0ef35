"""``reward_mode="per_agent"`` on the writing tasks: the joint score is unchanged, ROUGE goes to the
role whose text it scores, and a role whose own text passes the structure gates keeps that credit."""

import copy

import pytest

from tests.writing.test_probes import case_for


def _per_agent(task):
    own = copy.copy(task)
    own.reward_mode = "per_agent"
    return own


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_genuine_pair_per_agent_rewards(genuine, env_name):
    task, index, case = case_for(genuine, env_name, next(iter(genuine[env_name][1])))
    replies = dict(zip(task.agents, case.genuine))
    joint = task.evaluate(index, replies)
    own = _per_agent(task).evaluate(index, replies)
    assert joint.agent_rewards is None and own.reward == joint.reward  # the joint score does not move
    first, second = task.agents
    rouge = joint.reward.components.get("rouge", 0.0)
    assert own.agent_rewards[first].total == pytest.approx(joint.reward.total)
    assert own.agent_rewards[second].total == pytest.approx(joint.reward.total - rouge)
    assert (rouge > 0) == (env_name == "tldr")


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_a_broken_text_costs_only_its_author_the_structure_credit(genuine, env_name):
    task, index, case = case_for(genuine, env_name, next(iter(genuine[env_name][1])))
    first, second = task.agents
    replies = {first: case.genuine[0], second: "word " * 3}
    own = _per_agent(task).evaluate(index, replies)
    assert own.reward.total == 0.0
    assert own.agent_rewards[first].total == pytest.approx(0.5 * task.config.weights.structure)
    assert own.agent_rewards[second].total == 0.0


def test_reward_mode_is_checked(tldr_task):
    import llm_coop_envs

    with pytest.raises(ValueError, match="reward_mode"):
        llm_coop_envs.make("tldr-v1", reward_mode="solo")


def test_per_agent_env_passes_check_env(data_dir):
    import llm_coop_envs
    from llm_coop_envs.testing import check_env

    check_env(llm_coop_envs.make("tldr-v1", split="test", reward_mode="per_agent", num_turns=2), quick=True)
