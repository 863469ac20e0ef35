"""End to end on CPU with tiny random models: updates, logs, resume, layouts, a custom algorithm."""

import json

import numpy as np
import pytest
import torch

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers import register_algorithm
from trainers.algorithms.base import policy_gradient_loss
from trainers.metrics_log import read_metrics
from trainers.trainer import Trainer

DOCUMENTED = [
    "reward/mean", "reward/std", "reward/max", "reward/solved_rate", "reward/return_mean", "reward/helper",
    "agent/helper/loss", "agent/main/loss", "agent/helper/grad_norm", "agent/main/advantage_abs_mean",
    "agent/main/logp_mean", "perf/rollout_s", "perf/update_s", "perf/step_s", "perf/tokens_per_s", "train/step",
]


def _trainer(tmp_path, tiny_models, **fields):
    return Trainer(tiny_config(tmp_path, **fields), env=CoopEnv(LetterTask()), models=tiny_models)


def _weights(trainer):
    return {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}


def test_steps_change_each_agents_adapter_and_log_metrics(tmp_path, tiny_models):
    trainer = _trainer(tmp_path, tiny_models, steps=3, tensorboard=True)
    before = _weights(trainer)
    trainer.train()
    after = _weights(trainer)
    for agent in ("helper", "main"):
        changed = sum(float((before[agent][k] - after[agent][k]).abs().sum()) for k in before[agent])
        assert changed > 0, f"{agent}'s adapter did not change"
    rows = read_metrics(tmp_path / "run")
    assert [r["step"] for r in rows] == [1, 2, 3]
    for key in DOCUMENTED:
        assert key in rows[0], key
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert samples and set(samples[0]["replies"]) == {"helper", "main"}
    assert list((tmp_path / "run" / "tensorboard").iterdir())
    assert (tmp_path / "run" / "checkpoints" / "step-00000003" / "weights" / "helper.safetensors").is_file()


def test_base_weights_stay_frozen_and_agents_share_one_base(tmp_path, tiny_models):
    trainer = _trainer(tmp_path, tiny_models, steps=1)
    slots = trainer.policies.slots
    assert slots["helper"].model is slots["main"].model
    base = {n: p.clone() for n, p in slots["main"].model.named_parameters() if "lora_" not in n}
    trainer.train()
    for name, param in slots["main"].model.named_parameters():
        if "lora_" not in name:
            assert torch.equal(param, base[name]), name


def test_resume_two_plus_two_equals_four(tmp_path, tokenizer):
    straight = Trainer(tiny_config(tmp_path, run_name="straight", steps=4), env=CoopEnv(LetterTask()),
                       models=(build_model(tokenizer), tokenizer))
    straight.train()
    first = Trainer(tiny_config(tmp_path, run_name="split", steps=2), env=CoopEnv(LetterTask()),
                    models=(build_model(tokenizer), tokenizer))
    first.train()
    second = Trainer(tiny_config(tmp_path, run_name="split", steps=4, resume=True), env=CoopEnv(LetterTask()),
                     models=(build_model(tokenizer), tokenizer))
    assert second.step == 2
    second.train()
    for key, tensors in _weights(straight).items():
        for name, value in tensors.items():
            torch.testing.assert_close(_weights(second)[key][name], value, rtol=0, atol=0)
    rewards = lambda run: [r["reward/mean"] for r in read_metrics(tmp_path / run)]  # noqa: E731
    assert rewards("split") == rewards("straight")


def test_custom_algorithm_defined_here_trains(tmp_path, tiny_models):
    calls = []

    @register_algorithm("best_of_group_test")
    class BestOfGroup:
        """Reinforce only the best joint sample of each group."""

        def __init__(self, bonus: float = 1.0):
            self.bonus = bonus

        def advantages(self, group):
            calls.append(len(group.returns))
            return np.where(group.returns == group.returns.max(), self.bonus, 0.0)

        def loss(self, batch):
            return policy_gradient_loss(batch)

    trainer = _trainer(tmp_path, tiny_models, algo="best_of_group_test", algo_kwargs={"bonus": 2.0}, steps=2)
    before = _weights(trainer)
    trainer.train()
    assert calls == [4, 4]
    assert any(not torch.equal(before["main"][k], v) for k, v in _weights(trainer)["main"].items())


def test_cross_mode_forms_g_to_the_n_joint_samples(tmp_path, tokenizer):
    trainer = _trainer(tmp_path, (build_model(tokenizer), tokenizer), joint_mode="cross", group_size=3, steps=1)
    history = trainer.train()
    assert history[0]["train/joint_samples"] == 9
    aligned = _trainer(tmp_path, (build_model(tokenizer), tokenizer), run_name="aligned", group_size=3, steps=1).train()
    assert aligned[0]["train/joint_samples"] == 3


def test_multi_turn_tree_and_early_stop(tmp_path, tokenizer):
    env = CoopEnv(LetterTask(), num_turns=2, stop_when_solved=False)
    trainer = Trainer(tiny_config(tmp_path, group_size=2, steps=1), env=env, models=(build_model(tokenizer), tokenizer))
    groups = trainer.rollout()
    assert [g.depth for g in groups] == [0, 1, 1]  # the root and one child node per joint sample
    for sample in groups[0].samples:
        expected = sample.reward + trainer.cfg.gamma * float(np.mean([s.reward for s in sample.child.samples]))
        assert sample.return_ == pytest.approx(expected)
    stopped = Trainer(tiny_config(tmp_path, group_size=2, steps=1, early_stop_reward=-1.0), env=env,
                      models=(build_model(tokenizer), tokenizer))
    assert [g.depth for g in stopped.rollout()] == [0]


@pytest.mark.parametrize("protocol", ["sequential"])
def test_sequential_protocol_branches_per_acting_agent(tmp_path, tiny_models, protocol):
    env = CoopEnv(LetterTask(), protocol=protocol)
    trainer = Trainer(tiny_config(tmp_path, group_size=2, steps=1), env=env, models=tiny_models)
    groups = trainer.rollout()
    assert [g.agents for g in groups] == [("helper",), ("main",), ("main",)]
    trainer.train()


def test_separate_and_shared_layouts(tmp_path, tokenizer):
    models = {"helper": (build_model(tokenizer, seed=1), tokenizer), "main": (build_model(tokenizer, seed=2, hidden=48), tokenizer)}
    separate = Trainer(tiny_config(tmp_path, policy="separate", run_name="sep", steps=1), env=CoopEnv(LetterTask()), models=models)
    assert separate.policies.slots["helper"].model is not separate.policies.slots["main"].model
    separate.train()
    shared = Trainer(tiny_config(tmp_path, policy="shared", lora_r=0, run_name="shared", steps=1, learning_rate=1e-3),
                     env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    assert shared.policies.keys == ("shared",)
    before = shared.policies.state_dict("shared")
    shared.train()
    assert any(not torch.equal(before[k], v) for k, v in shared.policies.state_dict("shared").items())


def test_ppo_epochs_and_kl_penalty_run(tmp_path, tiny_models):
    history = _trainer(tmp_path, tiny_models, inner_epochs=2, algo_kwargs={"kl_coef": 0.1}, steps=1).train()
    assert np.isfinite(history[0]["agent/main/loss"])


def test_grpo_refuses_two_agents_without_a_shared_policy(tmp_path, tiny_models):
    with pytest.raises(ValueError, match="policy=shared"):
        _trainer(tmp_path, tiny_models, algo="grpo")
