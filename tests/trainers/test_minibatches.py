"""The algorithm's update schedule: ``minibatch_size`` joint samples per optimizer step and
``updates_per_rollout`` passes, with π_old fixed before the first step of the update."""

from __future__ import annotations

import math

import pytest
import torch

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.algorithms import get_algorithm
from trainers.algorithms.magrpo import MAGRPO
from trainers.trainer import Trainer


class Recording(MAGRPO):
    """MAGRPO that keeps what every loss call saw. It trains on zero advantages too, so that every
    reply is in its minibatch's one micro-batch and every minibatch has gradients (AdamW does not
    count a step in which no parameter has a gradient)."""

    zero_loss_at_zero_advantage = False

    def __init__(self, **options):
        super().__init__(**options)
        self.batches = []

    def loss(self, batch):
        self.batches.append(batch)
        return super().loss(batch)


def _trainer(tmp_path, tokenizer, *, algorithm=None, **fields):
    cfg = tiny_config(tmp_path, **{"steps": 1, "problems_per_step": 2, "micro_batch_size": 16, **fields})
    return Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer), algorithm=algorithm)


def _adam_steps(trainer) -> dict[str, int]:
    """How many times each agent key's optimizer stepped (AdamW's own counter)."""
    counts = {}
    for key, optimizer in trainer.optimizers.items():
        states = [state for state in optimizer.state.values() if "step" in state]
        counts[key] = int(states[0]["step"]) if states else 0
    return counts


def test_by_default_one_optimizer_step_per_rollout(tmp_path, tokenizer):
    trainer = _trainer(tmp_path, tokenizer, steps=2, algo="tests.trainers.test_minibatches:Recording")
    history = trainer.train()
    assert _adam_steps(trainer) == {key: 2 for key in trainer.optimizers}
    assert [row["train/optimizer_steps"] for row in history] == [1.0, 1.0]


@pytest.mark.parametrize("size, passes", [(3, 1), (3, 2), (8, 2), (1, 1)])
def test_minibatches_step_the_optimizer_ceil_n_over_k_times_per_pass(tmp_path, tokenizer, size, passes):
    trainer = _trainer(tmp_path, tokenizer, algo="tests.trainers.test_minibatches:Recording",
                       algo_kwargs={"minibatch_size": size, "updates_per_rollout": passes})
    history = trainer.train()
    samples = history[0]["train/joint_samples"]  # 2 problems x G=4
    assert samples == 8
    assert _adam_steps(trainer) == {key: math.ceil(samples / size) * passes for key in trainer.optimizers}
    assert history[0]["train/optimizer_steps"] == math.ceil(samples / size) * passes


def test_each_minibatch_is_a_mean_over_its_replies_and_pi_old_is_the_sampling_policy(tmp_path, tokenizer):
    algorithm = Recording(minibatch_size=3, updates_per_rollout=2)
    trainer = _trainer(tmp_path, tokenizer, algorithm=algorithm)
    items = trainer.training_items(trainer.rollout())
    # log π of every reply before any update, one forward per agent over all of its replies
    before = {}
    with torch.no_grad():
        for agent, agent_items in items.items():
            logps, mask = trainer.policies.token_logprobs(
                agent, [i.prompt_ids for i in agent_items], [i.completion_ids for i in agent_items],
                trainer.cfg.sampling_for(agent))
            before[agent] = [logps[row][mask[row].bool()] for row in range(len(agent_items))]
    trainer.update(items)
    minibatches = [range(0, 3), range(3, 6), range(6, 8)]
    assert len(algorithm.batches) == 2 * len(minibatches) * 2  # passes x minibatches x agents
    for call, batch in enumerate(algorithm.batches):
        rows = [i for i, item in enumerate(items[batch.agent]) if item.sample in minibatches[(call // 2) % 3]]
        assert batch.total_replies == len(rows)
        assert float(batch.weights.sum()) == pytest.approx(1.0)  # the minibatch's loss is its own mean
        for row, index in enumerate(rows):
            old = batch.old_logps[row][batch.mask[row].bool()]
            torch.testing.assert_close(old, before[batch.agent][index], rtol=1e-5, atol=1e-5)
    for first in algorithm.batches[:2]:  # minibatch 0 of the first pass, before any step: ratio 1
        torch.testing.assert_close(first.logps.detach(), first.old_logps, rtol=1e-5, atol=1e-5)
    moved = [float(((b.logps.detach() - b.old_logps) * b.mask).abs().max()) for b in algorithm.batches[2:]]
    assert max(moved) > 1e-4  # later minibatches see a policy that has moved, against the same π_old


def test_the_schedule_is_checked_and_inner_epochs_stays_its_default(tmp_path, tokenizer):
    with pytest.raises(ValueError, match="minibatch_size must be a whole number"):
        get_algorithm("magrpo", minibatch_size=0)
    with pytest.raises(ValueError, match="updates_per_rollout must be a whole number"):
        get_algorithm("marloo", updates_per_rollout=-1)
    assert get_algorithm("magrpo", minibatch_size="4").minibatch_size == 4  # a value from a command line
    with pytest.raises(ValueError, match="disagree"):
        _trainer(tmp_path, tokenizer, inner_epochs=3, algo_kwargs={"updates_per_rollout": 2})
    trainer = _trainer(tmp_path, tokenizer, inner_epochs=2, run_name="epochs")
    assert (trainer.minibatch_size, trainer.updates_per_rollout) == (None, 2)


class PlainPlugIn:
    """A plug-in that is not built on AlgorithmBase declares the schedule as attributes."""

    zero_loss_at_zero_advantage = False
    minibatch_size = 5
    updates_per_rollout = 1

    def advantages(self, group):
        return group.returns - group.returns.mean()

    def loss(self, batch):
        from trainers.algorithms import policy_gradient_loss

        return policy_gradient_loss(batch)


def test_a_plug_in_without_the_base_class_declares_its_schedule(tmp_path, tokenizer):
    trainer = _trainer(tmp_path, tokenizer, algorithm=PlainPlugIn())
    trainer.train()
    assert _adam_steps(trainer) == {key: 2 for key in trainer.optimizers}  # ceil(8 / 5)
