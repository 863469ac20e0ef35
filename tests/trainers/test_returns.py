"""Multi-turn returns: solving earlier never scores lower than solving later (solved states are
absorbing), and every turn of a tree weighs the same in the loss."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.algorithms.base import get_algorithm
from trainers.generation.base import Completion
from trainers.rollout import JointSample, Node, compute_returns, grow_trees, root_node
from trainers.train_items import reply_weights

HELPER = "def aux(n):\n    if n < 2:\n        return False\n    return all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
MAIN_RIGHT = "def x_or_y(n, x, y):\n    if aux(n):\n        return x\n    return y\n"
MAIN_NEAR_MISS = "def x_or_y(n, x, y):\n    if aux(n) and n != 2:\n        return x\n    return y\n"  # fails 1 of 5 tests


def _scripted(turns):
    """A sampler that answers turn k's requests with ``turns[k]``: {agent: [reply of sample 0, ...]}."""
    calls = []

    def sample(requests, n):
        turn = turns[min(len(calls), len(turns) - 1)]
        calls.append(requests)
        return [[Completion(text, (), ()) for text in turn[agent][:n]] for agent, _ in requests]

    return sample


@pytest.mark.slow
@pytest.mark.parametrize("num_turns", [2, 3])
def test_solving_earlier_never_scores_lower_on_coop_humaneval(data_dir, num_turns):
    import llm_coop_envs

    env = llm_coop_envs.make("coop_humaneval-v0", num_turns=num_turns)
    root = root_node(env, seed=0, options={"task_id": "CoopHumanEval/0"})
    # sample 0 solves at turn 1; sample 1 is a near miss at turn 1 and solves at turn 2 (or later)
    sampler = _scripted([
        {"helper": [HELPER, HELPER], "main": [MAIN_RIGHT, MAIN_NEAR_MISS]},
        {"helper": [HELPER, HELPER], "main": [MAIN_NEAR_MISS, MAIN_RIGHT]},
        {"helper": [HELPER, HELPER], "main": [MAIN_RIGHT, MAIN_RIGHT]},
    ])
    groups = grow_trees([root], sampler, group_size=2, gamma=0.9)
    early, late = root.samples
    assert early.solved and early.done and not late.solved
    assert early.reward == pytest.approx(4.0) and late.reward < early.reward
    assert early.return_ >= late.return_
    advantages = get_algorithm("magrpo").advantages(groups[0])
    assert advantages[0] >= advantages[1]
    # the absorbing state pays its reward for each skipped turn, discounted as if it had continued
    assert early.return_ == pytest.approx(4.0 * sum(0.9**k for k in range(num_turns)))


def test_the_task_texts_example_ranks_turn_one_solving_first():
    """Turn-1 rewards [4, 3]; the near miss is fixed at turn 2 (reward 4). Pooled, the returns were
    [4.0, 6.6]; with the absorbing solved state they are [7.6, 6.6]."""
    solved = JointSample(replies={}, observations={}, reward=4.0, solved=True, done=True, skipped_turns=1)
    near = JointSample(replies={}, observations={}, reward=3.0)
    near.child = Node(None, {}, ("a",), "t", 1, [JointSample(replies={}, observations={}, reward=4.0, solved=True, done=True)])
    root = Node(None, {}, ("a",), "t", 0, [solved, near])
    compute_returns(root, gamma=0.9)
    assert [solved.return_, near.return_] == pytest.approx([7.6, 6.6])


def test_every_turn_weighs_the_same_in_the_loss():
    # one tree, G = 2: the root node (depth 0, 2 replies) and two child nodes (depth 1, 2 replies each)
    positions = [(0, 0), (0, 0), (1, 1), (1, 1), (1, 2), (1, 2)]
    weights = np.array(reply_weights(positions))
    assert weights.sum() == pytest.approx(1.0)
    assert weights[:2].sum() == pytest.approx(weights[2:].sum())  # turn 1 counts as much as turn 2
    assert reply_weights([(0, 0)] * 4) == pytest.approx([0.25] * 4)  # one turn: the plain mean


def test_trainer_items_carry_per_turn_weights(tmp_path, tiny_models):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, tiny_config
    from trainers.trainer import Trainer

    env = CoopEnv(LetterTask(), num_turns=2, stop_when_solved=False)
    trainer = Trainer(tiny_config(tmp_path, group_size=2, steps=1), env=env, models=tiny_models)
    groups = trainer.rollout()
    items = trainer.training_items(groups)
    for agent in ("helper", "main"):
        weights = [i.weight for i in items[agent]]
        assert len(weights) == 6 and sum(weights) == pytest.approx(1.0)
        assert sum(weights[:2]) == pytest.approx(0.5)  # depth-first order: the root's two replies first
