"""A plug-in algorithm's metrics per agent: ``log(name, value, agent=...)`` is written as
``agent/<agent>/algo/<name>`` beside ``algo/<name>``, the mean over every agent."""

import pytest

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, tiny_config
from trainers.algorithms import AlgorithmBase, policy_gradient_loss
from trainers.metrics_log import read_metrics
from trainers.trainer import Trainer


class LogsTokensPerAgent(AlgorithmBase):
    """MAGRPO's advantage; each loss call logs its agent's reply tokens, an agent's own number."""

    def advantages(self, group):
        return group.returns - group.returns.mean()

    def loss(self, batch):
        self.log("reply_tokens", float(batch.mask.sum()) / len(batch.mask), agent=batch.agent)
        return policy_gradient_loss(batch)


def test_metrics_logged_per_agent_are_written_per_agent_and_averaged(tmp_path, tiny_models):
    trainer = Trainer(tiny_config(tmp_path, steps=1), env=CoopEnv(LetterTask()), models=tiny_models,
                      algorithm=LogsTokensPerAgent())
    trainer.train()
    (row,) = read_metrics(tmp_path / "run")
    helper, main = row["agent/helper/algo/reply_tokens"], row["agent/main/algo/reply_tokens"]
    assert row["algo/reply_tokens"] == pytest.approx((helper + main) / 2)  # one loss call per agent here
    assert helper == pytest.approx(row["agent/helper/reply_tokens"]) and main == pytest.approx(row["agent/main/reply_tokens"])


def test_a_value_without_an_agent_is_logged_as_before():
    algorithm = LogsTokensPerAgent()
    algorithm.log("value_loss", 1.0)
    algorithm.log("value_loss", 3.0)
    algorithm.log("ratio", 2.0, agent="main")
    assert algorithm.pop_metrics() == {"algo/value_loss": 2.0, "algo/ratio": 2.0, "agent/main/algo/ratio": 2.0}
    assert algorithm.pop_metrics() == {}
