"""Rollout trees, second pass: early-stopped samples are absorbing (a branch better at every turn never
scores lower, whatever the threshold), ReMax's greedy baseline reaches the end of its turn in the
sequential protocol, and one test per mutation that the earlier suite let through."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from trainers.algorithms.base import LossBatch, get_algorithm, kl_to_reference
from trainers.generation.base import Completion
from trainers.rollout import (
    JointSample, Node, absorbed_future, compute_returns, grow_trees, root_node, should_expand,
)


class ScriptedTurns:
    """A one-agent env whose reward is written in the reply (``"<branch>|<reward>"``): the sampler
    decides every reward of a tree. Each turn is one step; the episode lasts ``num_turns`` turns.
    Touched only through the PettingZoo calls the rollout makes (and ``copy.deepcopy``)."""

    possible_agents = ("a",)
    protocol = "parallel"

    def __init__(self, num_turns: int = 3) -> None:
        self.num_turns = num_turns
        self.agents: list[str] = []
        self.turn = 0

    def reset(self, seed=None, options=None):
        self.agents, self.turn = ["a"], 0
        return {"a": "root|1"}, {"a": {"task_id": "scripted", "turn": 0}}

    def step(self, actions):
        branch, reward = actions["a"].split("|")
        self.turn += 1
        done = self.turn >= self.num_turns
        info = {"task_id": "scripted", "turn": self.turn, "solved": False}
        observation = {"a": f"{branch}|{self.turn + 1}"}
        if done:
            self.agents = []
        return observation, {"a": float(reward)}, {"a": done}, {"a": False}, {"a": info}


def branch_sampler(schedules, offsets=(-0.05, 0.05)):
    """At the root, sample g takes branch g; in a branch's later turns its G siblings earn the branch's
    reward of that turn plus ``offsets[g]`` (so a node's mean is the schedule, and no sample is solved)."""
    names = sorted(schedules)

    def sample(requests, n):
        out = []
        for _, observation in requests:
            branch, turn = observation.split("|")
            turn = int(turn)
            if branch == "root":
                texts = [f"{names[g]}|{schedules[names[g]][0]}" for g in range(n)]
            else:
                texts = [f"{branch}|{schedules[branch][turn - 1] + offsets[g]}" for g in range(n)]
            out.append([Completion(text, (), ()) for text in texts])
        return out

    return sample


# A is better than B at every turn; A's node reaches 0.9 at turn 2, B's never does before turn 3.
SCHEDULES = {"A": [0.9, 1.0, 1.0], "B": [0.5, 0.8, 0.9]}


@pytest.mark.parametrize("gamma", [0.5, 0.9, 1.0])
@pytest.mark.parametrize("threshold", [None, -1.0, 0.0, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1])
def test_a_branch_better_at_every_turn_never_scores_lower_whatever_the_early_stop(threshold, gamma):
    """Every threshold cuts a different set of nodes (none, the root, A's turn 2, both branches at
    turn 2, ...); the better branch's return stays at least the worse one's."""
    root = root_node(ScriptedTurns(3))
    groups = grow_trees([root], branch_sampler(SCHEDULES), group_size=2, gamma=gamma, early_stop_reward=threshold)
    better, worse = root.samples
    assert better.replies["a"].text.startswith("A") and worse.replies["a"].text.startswith("B")
    assert better.return_ >= worse.return_ - 1e-12, (better.return_, worse.return_)
    assert groups[0].returns[0] >= groups[0].returns[1] - 1e-12


def test_an_early_stopped_unsolved_sample_keeps_paying_for_the_turns_it_skips():
    """The issue's case: A's turn-2 node is cut at 0.9; its unsolved samples used to lose turn 3
    (R_A = 0.9 + 0.9·1.0 = 1.80 < R_B = 0.5 + 0.9·(0.8 + 0.9·0.9) = 1.949)."""
    root = root_node(ScriptedTurns(3))
    grow_trees([root], branch_sampler(SCHEDULES), group_size=2, gamma=0.9, early_stop_reward=0.9)
    better, worse = root.samples
    cut = better.child.samples
    assert all(s.child is None and not s.solved for s in cut)
    assert [s.skipped_turns for s in cut] == [1, 1]
    assert [s.return_ for s in cut] == pytest.approx([0.95 * 1.9, 1.05 * 1.9])
    assert better.return_ == pytest.approx(0.9 + 0.9 * 1.0 * 1.9)
    assert worse.return_ == pytest.approx(0.5 + 0.9 * (0.8 + 0.9 * 0.9))
    assert worse.child.samples[0].child is not None  # B's node (mean 0.8) was expanded


def test_early_stopping_reads_the_nodes_mean_reward_not_its_best_sample():
    node = Node(None, {}, ("a",), "t", 0, [JointSample({}, {}, reward=0.0), JointSample({}, {}, reward=1.0)])
    assert should_expand(node, 0.9)  # mean 0.5 < 0.9, though one sample reached 1.0
    assert not should_expand(node, 0.5)
    assert should_expand(node, None)


# ---------------------------------------------------------------------------- sequential protocol
def letters_sampler(text):
    def sample(requests, n):
        return [[Completion(text, (), ()) for _ in range(n)] for _ in requests]

    return sample


def test_the_sequential_protocols_absorbing_rule_discounts_by_whole_turns():
    """Two agents take turns: a turn is two tree levels, so a skipped turn is worth gamma² · r."""
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask

    env = CoopEnv(LetterTask(), num_turns=2, protocol="sequential")
    root = root_node(env, seed=0)
    assert root.levels_per_turn == 2
    grow_trees([root], letters_sampler("aaaa"), group_size=2, gamma=0.9)  # every reply solves
    last = root.samples[0].child.samples[0]  # main's step ends turn 1, solved
    assert last.solved and last.skipped_turns == 1 and last.levels_per_turn == 2
    assert last.return_ == pytest.approx(last.reward * (1 + 0.9 ** 2))
    assert absorbed_future(4.0, 2, 2, 0.5) == pytest.approx(4.0 * (0.5 ** 2 + 0.5 ** 4))


def test_maremax_greedy_baseline_reaches_the_end_of_the_turn_in_the_sequential_protocol():
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask

    env = CoopEnv(LetterTask(), num_turns=1, protocol="sequential")
    root = root_node(env, seed=0)
    greedy_calls = []

    def greedy(requests, n):
        greedy_calls.append([agent for agent, _ in requests])
        return letters_sampler("aaab")(requests, n)

    groups = grow_trees([root], letters_sampler("abbb"), group_size=2, gamma=0.9, greedy_sampler=greedy)

    def turn_reward(helper: str) -> float:  # of a turn played on a fresh copy of the same state
        fresh = copy.deepcopy(env)
        fresh.reset(seed=0)
        fresh.step({"helper": helper})
        _, rewards, *_ = fresh.step({"main": "aaab"})
        return float(np.mean(list(rewards.values())))

    assert turn_reward("aaab") > turn_reward("abbb") > 0
    helper_group = next(g for g in groups if g.depth == 0)
    assert helper_group.agents == ("helper",)
    assert helper_group.greedy.reward == 0.0  # helper's own step pays nothing in mid-turn ...
    assert helper_group.greedy.return_ == pytest.approx(0.9 * turn_reward("aaab"))  # ... its turn does
    assert ["main"] in greedy_calls  # main's greedy reply was sampled to finish the turn
    advantages = get_algorithm("maremax").advantages(helper_group)
    np.testing.assert_allclose(advantages[:, 0], helper_group.returns - 0.9 * turn_reward("aaab"))
    main_group = next(g for g in groups if g.depth == 1)
    # the turn's last agent: one greedy step after helper's sampled reply
    assert main_group.greedy.return_ == pytest.approx(turn_reward("abbb"))


# ---------------------------------------------------------------------------- surviving mutations
def test_per_agent_returns_are_discounted_like_the_joint_return():
    child = Node(None, {}, ("a", "b"), "t", 1, [
        JointSample({}, {}, reward=2.0, agent_rewards={"a": 1.0, "b": 3.0}),
        JointSample({}, {}, reward=4.0, agent_rewards={"a": 5.0, "b": 3.0}),
    ])
    parent = JointSample({}, {}, reward=1.0, agent_rewards={"a": 0.5, "b": 1.5}, child=child)
    root = Node(None, {}, ("a", "b"), "t", 0, [parent])
    compute_returns(root, gamma=0.5)
    assert parent.return_ == pytest.approx(1.0 + 0.5 * 3.0)
    assert parent.agent_returns == pytest.approx({"a": 0.5 + 0.5 * 3.0, "b": 1.5 + 0.5 * 3.0})


def test_the_kl_estimator_is_k3_of_reference_over_policy():
    """k3 = r − log r − 1 with r = π_ref/π (Schulman's estimator of KL(π‖π_ref)): at log r = 1 it is
    e − 2, at log r = −1 it is 1/e; swapping π and π_ref swaps the two."""
    logps = torch.tensor([[0.0, 0.0]])
    ref = torch.tensor([[1.0, -1.0]])
    batch = LossBatch("a", logps, logps, torch.ones(1, 2), torch.zeros(1), ref_logps=ref, kl_coef=1.0)
    torch.testing.assert_close(kl_to_reference(batch), torch.tensor([[np.e - 2, np.exp(-1.0)]], dtype=torch.float32), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("own_returns", [False, True])
def test_mappo_own_returns_picks_each_agents_return_only_when_asked(monkeypatch, own_returns):
    """With a zero value function, GAE's last-token advantage is the reply's return: the joint one by
    default, the agent's own with ``own_returns``."""
    from trainers.algorithms import mappo
    from trainers.rollout import Group

    algorithm = get_algorithm("mappo", own_returns=own_returns)
    algorithm.policies = None  # hidden_states is replaced: no model is read
    monkeypatch.setattr(mappo, "hidden_states", lambda policies, sequences: [torch.zeros(len(s), 4) for s in sequences])
    monkeypatch.setattr(algorithm, "value", lambda features: torch.zeros(len(features)))
    monkeypatch.setattr(algorithm, "remember", lambda *args: None)
    replies = {"a": Completion("x", (1,), (5, 6)), "b": Completion("y", (2,), (7,))}
    samples = tuple(JointSample(dict(replies), {}) for _ in range(2))
    group = Group(returns=np.array([1.0, 2.0]), rewards=np.array([1.0, 2.0]), agents=("a", "b"), depth=0,
                  samples=samples, agent_returns=np.array([[10.0, 20.0], [30.0, 40.0]]))
    table = algorithm.advantages(group)
    last = [[float(table[row][column][-1]) for column in range(2)] for row in range(2)]
    assert last == ([[10.0, 20.0], [30.0, 40.0]] if own_returns else [[1.0, 1.0], [2.0, 2.0]])
