"""The actor-critics (MAPPO, IAC, MAAC): GAE, advantages from their critics, value heads that explain
the returns, an exact resume, and each raising the mean reward of a scripted env."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from llm_coop_envs.core import CoopEnv, Evaluation, RewardResult
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from tests.trainers.half_letters import HalfLetterTask, mean_reward, train_half_letters
from tests.trainers.test_owned_modules import assert_same_optimizer_state
from trainers.algorithms import get_algorithm
from trainers.algorithms.critic import explained_variance
from trainers.algorithms.mappo import MAPPO
from trainers.trainer import Trainer


class LevelTask(LetterTask):
    """Two problems with very different prompts, worth 0 and 1 whatever the replies: the return is a
    function of the joint observation, which a centralised value function can learn."""

    def __len__(self) -> int:
        return 2

    def prompt(self, index: int, agent: str) -> str:
        return ["aaaa aaaa aaaa aaaa", "ZZZZ ZZZZ ZZZZ ZZZZ"][index]

    def evaluate(self, index, replies):
        return Evaluation(RewardResult.from_components({"level": float(index)}), solved=index == 1)


CRITICS = ["mappo", "iac", "maac"]


def _trainer(tmp_path, tokenizer, name="mappo", **fields):
    algorithm = get_algorithm(name, value_lr=0.1, value_updates=16)
    return Trainer(tiny_config(tmp_path, problems_per_step=4, **fields), env=CoopEnv(LevelTask()),
                   models=(build_model(tokenizer), tokenizer), algorithm=algorithm)


def test_gae_per_token_with_a_final_reward():
    algorithm = MAPPO(gae_lambda=0.5, token_gamma=1.0)
    values = torch.tensor([0.2, 0.4, 0.8])
    # δ = [0.4 − 0.2, 0.8 − 0.4, 1 − 0.8]; A_t = δ_t + 0.5·A_{t+1}
    expected = torch.tensor([0.2 + 0.5 * (0.4 + 0.5 * 0.2), 0.4 + 0.5 * 0.2, 0.2])
    torch.testing.assert_close(algorithm.gae(values, 1.0), expected)
    lambda_one = MAPPO(gae_lambda=1.0).gae(values, 1.0)  # λ = 1: Monte Carlo, A_t = R − V_t
    torch.testing.assert_close(lambda_one, 1.0 - values)
    assert explained_variance(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])) == 1.0
    assert isinstance(get_algorithm("mappo"), MAPPO)


@pytest.mark.parametrize("name", CRITICS)
def test_value_head_explains_the_returns_after_a_few_steps(tmp_path, tokenizer, name):
    history = _trainer(tmp_path, tokenizer, name, steps=6).train()
    assert history[0]["algo/explained_variance"] == 0.0  # V ≡ 0 before the first update
    # From step 2 on, in every step that saw both problems (so that the returns vary), the head
    # (fitted on earlier steps only) explains part of the variance of the value targets.
    mixed = [row for row in history[1:] if 0 < row["reward/mean"] < 1]
    assert mixed, "no step saw both problems"
    assert all(row["algo/explained_variance"] > 0 for row in mixed), [r["algo/explained_variance"] for r in mixed]
    assert history[-1]["algo/value_loss"] < history[0]["algo/value_loss"]


@pytest.mark.parametrize("name", CRITICS)
def test_value_head_and_its_optimizer_resume_exactly(tmp_path, tokenizer, name):
    straight = _trainer(tmp_path, tokenizer, name, run_name="straight", steps=4)
    straight.train()
    first = _trainer(tmp_path, tokenizer, name, run_name="split", steps=2)
    first.train()
    second = _trainer(tmp_path, tokenizer, name, run_name="split", steps=4, resume=True)
    # save → load: the restored head and optimizer state are bitwise the saved ones
    for name, value in first.algorithm.head.state_dict().items():
        assert torch.equal(second.algorithm.head.state_dict()[name], value), name
    assert_same_optimizer_state(second.owned_optimizers["value_head"], first.owned_optimizers["value_head"])
    second.train()  # and the resumed run continues exactly as the uninterrupted one
    for name, value in straight.algorithm.head.state_dict().items():
        assert torch.equal(second.algorithm.head.state_dict()[name], value), name
    assert_same_optimizer_state(second.owned_optimizers["value_head"], straight.owned_optimizers["value_head"])
    for key in straight.policies.keys:
        for name, value in straight.policies.state_dict(key).items():
            assert torch.equal(second.policies.state_dict(key)[name], value), (key, name)
    values = lambda trainer: [row["algo/value_loss"] for row in trainer.history]  # noqa: E731
    assert values(second) == values(straight)[2:]


@pytest.mark.parametrize(("name", "per_agent"), [("mappo", False), ("iac", False), ("iac", True), ("maac", False)])
def test_actor_critics_raise_the_mean_reward_of_a_scripted_env(tmp_path, tokenizer, name, per_agent):
    # From about a third of the letters in a–m per agent (reward ≈ 0.3 of 2) towards all of them. With
    # seeds 0–2 every actor-critic gained at least 0.78 (one agent can settle on a reply early): 0.5
    # leaves room for other platforms' numerics.
    algorithm = get_algorithm(name, value_lr=0.1, value_updates=8)
    history = train_half_letters(tmp_path, tokenizer, algorithm, per_agent=per_agent)
    first, last = mean_reward(history, slice(0, 5)), mean_reward(history, slice(-5, None))
    assert last > first + 0.5, (first, last)


def _advantages_with_a_random_head(tmp_path, tokenizer, name):
    """A fresh trainer on the per-agent scripted env, its head set at random, one rollout's advantages."""
    from trainers.algorithms.critic import hidden_states

    trainer = Trainer(tiny_config(tmp_path, problems_per_step=2), env=CoopEnv(HalfLetterTask(per_agent=True)),
                      models=(build_model(tokenizer), tokenizer), algorithm=get_algorithm(name))
    torch.nn.init.normal_(trainer.algorithm.head.weight)
    group = trainer.rollout()[0]

    def value(ids, head):
        return float(trainer.algorithm.value(hidden_states(trainer.policies, [ids])[0][-1:], head)[0])

    return trainer, group, np.asarray(trainer.algorithm.advantages(group)), value


def test_iac_gives_each_agent_its_own_critic_and_return(tmp_path, tokenizer):
    trainer, group, advantages, value = _advantages_with_a_random_head(tmp_path, tokenizer, "iac")
    assert trainer.algorithm.head.weight.shape[0] == 2  # one head per agent
    own = group.returns_per_agent()
    assert not np.allclose(own[:, 0], own[:, 1])  # the per-agent rewards differ
    for column, agent in enumerate(group.agents):
        head = trainer.policies.agents.index(agent)
        for row, sample in enumerate(group.samples):
            expected = own[row, column] - value(list(sample.replies[agent].prompt_ids), head)
            assert abs(advantages[row, column] - expected) < 1e-5


def test_maac_gives_every_agent_the_advantage_of_one_joint_value(tmp_path, tokenizer):
    trainer, group, advantages, value = _advantages_with_a_random_head(tmp_path, tokenizer, "maac")
    assert advantages.shape == (len(group.samples),) and trainer.algorithm.head.weight.shape[0] == 1
    for row, sample in enumerate(group.samples):
        joint = [t for agent in group.agents for t in sample.replies[agent].prompt_ids]
        assert abs(advantages[row] - (group.returns[row] - value(joint, 0))) < 1e-5


@pytest.mark.parametrize("name", CRITICS)
def test_the_first_agents_base_reads_for_the_critic_of_separate_models(tmp_path, tokenizer, name):
    models = {"helper": (build_model(tokenizer, seed=1), tokenizer),
              "main": (build_model(tokenizer, seed=2, hidden=48), tokenizer)}
    trainer = Trainer(tiny_config(tmp_path, algo=name, policy="separate", steps=1),
                      env=CoopEnv(LetterTask(), protocol="sequential"), models=models)  # main alone acts at depth 1
    assert "algo/value_loss" in trainer.train()[0]
    other = copy.deepcopy(tokenizer)
    other.add_tokens(["<|other|>"])
    with pytest.raises(ValueError, match="share a tokenizer"):
        Trainer(tiny_config(tmp_path, algo=name, policy="separate", run_name="other"), env=CoopEnv(LetterTask()),
                models={"helper": models["helper"], "main": (build_model(other), other)})
