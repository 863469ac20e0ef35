"""MAPPO: per-token GAE, a centralised value head that explains the returns, and an exact resume."""

from __future__ import annotations

import torch

from llm_coop_envs.core import CoopEnv, Evaluation, RewardResult
from tests.trainers.conftest import LetterTask, build_model, tiny_config
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


def _trainer(tmp_path, tokenizer, **fields):
    algorithm = MAPPO(value_lr=0.1, value_updates=16)
    return Trainer(tiny_config(tmp_path, problems_per_step=4, **fields), env=CoopEnv(LevelTask()),
                   models=(build_model(tokenizer), tokenizer), algorithm=algorithm)


def test_gae_per_token_with_a_final_reward():
    algorithm = MAPPO(gae_lambda=0.5, token_gamma=1.0)
    values = torch.tensor([0.2, 0.4, 0.8])
    # δ = [0.4 − 0.2, 0.8 − 0.4, 1 − 0.8]; A_t = δ_t + 0.5·A_{t+1}
    torch.testing.assert_close(algorithm.gae(values, 1.0), torch.tensor([0.2 + 0.5 * (0.4 + 0.5 * 0.2), 0.4 + 0.5 * 0.2, 0.2]))
    lambda_one = MAPPO(gae_lambda=1.0).gae(values, 1.0)  # λ = 1: Monte Carlo, A_t = R − V_t
    torch.testing.assert_close(lambda_one, 1.0 - values)
    assert explained_variance(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])) == 1.0
    assert isinstance(get_algorithm("mappo"), MAPPO)


def test_value_head_explains_the_returns_after_a_few_steps(tmp_path, tokenizer):
    history = _trainer(tmp_path, tokenizer, steps=6).train()
    assert history[0]["algo/explained_variance"] == 0.0  # V ≡ 0 before the first update
    # From step 2 on, in every step that saw both problems (so that the returns vary), the head
    # (fitted on earlier steps only) explains part of the variance of the value targets.
    mixed = [row for row in history[1:] if 0 < row["reward/mean"] < 1]
    assert mixed, "no step saw both problems"
    assert all(row["algo/explained_variance"] > 0 for row in mixed), [r["algo/explained_variance"] for r in mixed]
    assert history[-1]["algo/value_loss"] < history[0]["algo/value_loss"]


def test_value_head_and_its_optimizer_resume_exactly(tmp_path, tokenizer):
    straight = _trainer(tmp_path, tokenizer, run_name="straight", steps=4)
    straight.train()
    first = _trainer(tmp_path, tokenizer, run_name="split", steps=2)
    first.train()
    second = _trainer(tmp_path, tokenizer, run_name="split", steps=4, resume=True)
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
