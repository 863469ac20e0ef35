"""A tiny task for core tests: each agent must reply with its own secret word."""

from __future__ import annotations

from collections.abc import Mapping

from llm_coop_envs.core import Evaluation, RewardResult


class SecretWordTask:
    agents = ("first", "second")

    def __init__(self, words: tuple[str, ...] = ("apple", "brick", "cloud", "delta")) -> None:
        self.words = words

    def __len__(self) -> int:
        return len(self.words)

    def task_id(self, index: int) -> str:
        return f"toy/{index}"

    def prompt(self, index: int, agent: str) -> str:
        return f"Problem {index}. Say the word for {agent}."

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        hits = {a: float(self.words[index] in replies[a]) for a in self.agents}
        feedback = {a: "correct" if hits[a] else f"missing the word '{self.words[index]}'" for a in self.agents}
        return Evaluation(RewardResult.from_components(hits), solved=all(hits.values()), feedback=feedback)
