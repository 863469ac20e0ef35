"""The episode runner on the embedded coop_basics-v0 suite (real sandbox), with a scripted policy.

What it returns is checked against a plain reset/step loop and against the trainer's rollout tree
(``grow_trees`` with one sample per node, what the trainer's evaluation used to play)."""

from __future__ import annotations

import copy

import pytest

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from llm_coop_envs.core.runner import run_episode, run_episodes
from tests.toy_task import SecretWordTask
from trainers.generation.base import Completion
from trainers.rollout import grow_trees, root_node

HELPER = "```python\ndef aux(count):\n    return count * 3\n```"
MAIN_WRONG = "```python\ndef total_ticket_cost(counts):\n    return sum(counts)\n```"
MAIN_RIGHT = "```python\ndef total_ticket_cost(counts):\n    return sum(aux(c) for c in counts)\n```"


def script(agent: str, observation: str) -> str:
    """Helper right at once; main wrong on turn 1, right once it sees the feedback (turn 2)."""
    if agent == "helper":
        return HELPER
    return MAIN_RIGHT if "--- Turn 2" in observation else MAIN_WRONG


def make_env(**kwargs):
    return llm_coop_envs.make("coop_basics-v0", split="test", tier=1, num_turns=3, **kwargs)


def without_details(infos):
    return {agent: {k: v for k, v in info.items() if k != "details"} for agent, info in infos.items()}


def manual_loop(env, seed, options):
    """The reference: reset, then step with the script until the env has no agents."""
    observations, infos = env.reset(seed=seed, options=options)
    steps = []
    while env.agents:
        acting = [a for a in env.agents if infos[a].get("active", True)]
        actions = {a: script(a, observations[a]) for a in acting}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        steps.append((actions, rewards, terminations, truncations, without_details(infos)))
    return steps


def test_a_two_turn_episode_is_what_a_reset_step_loop_gives():
    result = run_episode(make_env(), script, seed=0, options={"index": 0})
    expected = manual_loop(make_env(), 0, {"index": 0})
    assert result.task_id == "coop_basics/t1/ticket_cost"
    assert [(s.replies, s.rewards, s.terminations, s.truncations, without_details(s.infos)) for s in result.steps] == expected
    first, second = result.steps
    assert "--- Turn 2" in second.observations["main"] and "--- Turn 2" not in first.observations["main"]
    assert first.ends_turn and not first.info["solved"] and second.info["solved"]
    assert second.joint_reward == second.rewards["main"] > first.joint_reward
    assert result.final is second and result.error == ""


def test_many_episodes_in_lockstep_match_the_rollout_tree():
    calls = []

    def policy(requests):
        calls.append([(r.episode, r.agent) for r in requests])
        return [Completion(script(r.agent, r.observation), (), ()) for r in requests]

    env = make_env()
    results = run_episodes([copy.deepcopy(env) for _ in range(2)], policy, seeds=[0, 0],
                           options=[{"index": 0}, {"index": 1}])
    assert calls[0] == [(0, "helper"), (0, "main"), (1, "helper"), (1, "main")]  # one call per step, episode-major

    def sampler(requests, n):
        return [[Completion(script(agent, observation), (), ())] * n for agent, observation in requests]

    roots = [root_node(copy.deepcopy(env), seed=0, options={"index": i}) for i in range(2)]
    grow_trees(roots, sampler, group_size=1)
    for root, result in zip(roots, results):
        chain, node = [], root
        while node is not None and node.samples:
            chain.append(node.samples[0])
            node = node.samples[0].child
        assert result.task_id == root.task_id
        assert [s.reward for s in chain] == [s.joint_reward for s in result.steps]
        assert [s.solved for s in chain] == [s.info["solved"] for s in result.steps]
        assert [{a: c.text for a, c in s.replies.items()} for s in chain] == [
            {a: c.text for a, c in s.replies.items()} for s in result.steps]


def test_the_sequential_protocol_asks_only_the_active_agent():
    seen = []

    def policy(agent, observation):
        seen.append(agent)
        return script(agent, observation)

    result = run_episode(make_env(protocol="sequential"), policy, seed=0, options={"index": 0})
    assert seen == ["helper", "main", "helper", "main"]
    assert [s.ends_turn for s in result.steps] == [False, True, False, True]
    assert "def aux(count)" in result.steps[1].observations["main"]  # main saw the helper's reply


class BrokenTask(SecretWordTask):
    def evaluate(self, index, replies):
        if index == 1:
            raise ZeroDivisionError("a bug in the task")
        return super().evaluate(index, replies)


def test_an_env_that_raises_ends_its_own_episode_when_errors_are_recorded():
    envs = [CoopEnv(BrokenTask()) for _ in range(2)]
    results = run_episodes(envs, lambda requests: ["apple"] * len(requests),
                           options=[{"index": 0}, {"index": 1}], errors="record")
    assert results[0].error == "" and results[0].final.info["solved"] is True
    assert results[1].error == "ZeroDivisionError: a bug in the task"
    assert results[1].final.replies == {"first": "apple", "second": "apple"} and results[1].final.rewards == {}
    with pytest.raises(ZeroDivisionError):
        run_episodes([CoopEnv(BrokenTask())], lambda requests: [""] * len(requests), options=[{"index": 1}])


def test_a_policy_that_answers_the_wrong_number_of_requests_is_an_error():
    with pytest.raises(RuntimeError, match="returned 1 replies for 2 requests"):
        run_episodes([make_env()], lambda requests: ["x"], options=[{"index": 0}])
    with pytest.raises(ValueError, match="errors must be"):
        run_episodes([make_env()], lambda requests: [], errors="ignore")
