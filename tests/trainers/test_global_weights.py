"""Reply weights over the global batch: N processes weigh every reply as one process over the same
problems does, whatever the shape of each process's trees; and a step's gradient does not depend on
how its rows are grouped into micro-batches."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from trainers.distributed import summed
from trainers.train_items import depth_counts, reply_weights


def _one_process_view(*ranks):
    """The ranks' positions as one process sees them: node ids made distinct across ranks."""
    merged, offset = [], 0
    for positions in ranks:
        merged += [(depth, node + offset) for depth, node in positions]
        offset += 1 + max(node for _, node in positions)
    return merged


@pytest.mark.parametrize("ranks", [
    # rank 0's problem is solved at turn 1 by every sample; rank 1's tree goes on to turn 2
    ([(0, 0)] * 4, [(0, 0)] * 4 + [(1, 1)] * 4 + [(1, 2)] * 4),
    # both 2-turn, with 3 and 1 child nodes; and three ranks of which one has two problems
    ([(0, 0)] * 4 + [(1, n) for n in (1, 2, 3) for _ in range(4)], [(0, 0)] * 4 + [(1, 1)] * 4),
    ([(0, 0)] * 2, [(0, 0)] * 2 + [(1, 1)] * 2, [(0, 0)] * 2 + [(0, 1)] * 2 + [(1, 2)] * 2 + [(1, 3)] * 2),
], ids=["solved_vs_two_turns", "three_vs_one_child", "three_ranks"])
def test_n_processes_weigh_every_reply_as_one_process_does(ranks):
    one = reply_weights(_one_process_view(*ranks))
    shared = summed([depth_counts(positions) for positions in ranks])
    many = [w for positions in ranks for w in reply_weights(positions, shared, processes=len(ranks))]
    # DDP averages the processes' gradients: each reply's share of the step is its weight / N
    assert [w / len(ranks) for w in many] == pytest.approx(one)
    assert sum(one) == pytest.approx(1.0)
    local = [w for positions in ranks for w in reply_weights(positions)]  # each process on its own trees
    assert [w / len(ranks) for w in local] != pytest.approx(one)  # what the old normalisation gave


def test_summed_adds_nested_counts_key_by_key():
    assert summed([{"a": {0: 1, 1: 3}}, {"a": {0: 1}, "b": {0: 2}}]) == {"a": {0: 2, 1: 3}, "b": {0: 2}}


def _gradients(trainer, items):
    trainer.minibatches(items)  # the step's totals, as update() takes them
    grads = {}
    for key in trainer.optimizers:
        for param in trainer.policies.named_trainable(key).values():
            param.grad = None
        for agent in trainer.policies.agents_of(key):
            trainer._accumulate(agent, items.get(agent, []), {})
        grads[key] = torch.cat([p.grad.flatten() for p in trainer.policies.named_trainable(key).values()
                                if p.grad is not None])
    return grads


@pytest.mark.parametrize("aggregation", ["token_sum", "sequence_mean", "token_mean"])
def test_a_steps_gradient_is_the_same_batched_and_unbatched(tmp_path, tiny_models, aggregation):
    """Two problems of 2-turn trees (of different shapes: stop_when_solved), every row in one micro-batch
    or one row per micro-batch: the same gradient."""
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, tiny_config
    from trainers.trainer import Trainer

    env = CoopEnv(LetterTask(), num_turns=2)
    cfg = tiny_config(tmp_path, group_size=3, problems_per_step=2, micro_batch_size=64,
                      algo_kwargs={"token_aggregation": aggregation})
    trainer = Trainer(cfg, env=env, models=tiny_models)
    items = trainer.training_items(trainer.rollout())
    assert any(item.weight != items["helper"][0].weight for item in items["helper"])  # 2 turns weighed
    batched = _gradients(trainer, items)
    trainer.cfg = dataclasses.replace(cfg, micro_batch_size=1)
    unbatched = _gradients(trainer, items)
    for key, grad in batched.items():
        assert float(grad.abs().max()) > 0
        torch.testing.assert_close(unbatched[key], grad, rtol=1e-4, atol=1e-6)
