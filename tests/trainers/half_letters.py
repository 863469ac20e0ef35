"""A scripted env that a tiny model learns in a few dozen steps through the real trainer, for the
actor-critic algorithms (their critic reads the base model, so the tabular bandit cannot host them).

Each agent is paid the share of its reply's characters that are letters a–m: about a third for a
random model, up to 1 each. The adapters also cover ``lm_head``, so that a few steps can move the
tiny model's output distribution.
"""

from __future__ import annotations

from llm_coop_envs.core import CoopEnv, Evaluation, RewardResult
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.trainer import Trainer

FIRST_HALF = set("abcdefghijklm")


class HalfLetterTask(LetterTask):
    """Joint reward: the sum of the agents' shares; with ``per_agent`` each agent gets its own share."""

    def __init__(self, per_agent: bool = False) -> None:
        self.per_agent = per_agent

    def evaluate(self, index, replies):
        shares = {a: sum(c in FIRST_HALF for c in replies[a]) / max(len(replies[a]), 1) for a in self.agents}
        own = {a: RewardResult.from_components({a: share}) for a, share in shares.items()}
        return Evaluation(RewardResult.from_components(shares), solved=False,
                          agent_rewards=own if self.per_agent else None)


def train_half_letters(tmp_path, tokenizer, algorithm, per_agent: bool = False, steps: int = 30,
                       **fields) -> list[dict]:
    """Train the tiny model on :class:`HalfLetterTask` with ``algorithm``; the history of metrics."""
    config = tiny_config(tmp_path, steps=steps, problems_per_step=2, learning_rate=0.05,
                         lora_target_modules=("q_proj", "v_proj", "o_proj", "down_proj", "lm_head"), **fields)
    trainer = Trainer(config, env=CoopEnv(HalfLetterTask(per_agent)), models=(build_model(tokenizer), tokenizer),
                      algorithm=algorithm)
    return trainer.train()


def mean_reward(history: list[dict], steps: slice) -> float:
    rows = history[steps]
    return sum(row["reward/mean"] for row in rows) / len(rows)
