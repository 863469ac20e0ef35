"""What a collaboration task provides to the environment core.

A task owns its problems (dataset rows), the prompt each role sees and the scoring of a joint
reply. Everything about episodes (turns, feedback, seeding, bookkeeping) lives in
:class:`~llm_coop_envs.core.env.CoopEnv`, so a new task is only these few methods.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from llm_coop_envs.core.reward import RewardResult


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The verdict on one joint reply.

    ``feedback`` holds, per agent, what the task itself can say about the reply (failed tests,
    failed reward levels); the ``"tests"`` feedback provider passes it on in multi-turn episodes.
    ``details`` is JSON-friendly diagnostic data (test outcomes, parse results) copied into infos.
    """

    reward: RewardResult
    solved: bool = False
    feedback: Mapping[str, str] = dataclasses.field(default_factory=dict)
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    agent_rewards: Mapping[str, RewardResult] | None = None
    """Each agent's own reward from the same judgement, when the task was asked for per-agent rewards
    (``reward_mode="per_agent"``); ``None``: every agent gets the joint ``reward``."""
    private_reward: bool = False
    """The reward counts tests the agents must not learn about within an episode (coding ``v2`` rules):
    a feedback provider shows ``solved`` at most, never the reward or its components."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "feedback", MappingProxyType(dict(self.feedback)))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))
        if self.agent_rewards is not None:
            object.__setattr__(self, "agent_rewards", MappingProxyType(dict(self.agent_rewards)))

    def reward_of(self, agent: str) -> RewardResult:
        """The reward ``agent`` receives: its own when there are per-agent rewards, else the joint one."""
        if self.agent_rewards is not None and agent in self.agent_rewards:
            return self.agent_rewards[agent]
        return self.reward


@runtime_checkable
class Task(Protocol):
    """A set of problems that a fixed team of roles solves together."""

    agents: tuple[str, ...]
    """Role names; in the sequential protocol they act in this order."""

    def __len__(self) -> int:
        """Number of problems."""

    def task_id(self, index: int) -> str:
        """The dataset's id of problem ``index`` (e.g. ``"HumanEval/0"``)."""

    def prompt(self, index: int, agent: str) -> str:
        """The first observation of ``agent`` for problem ``index``."""

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        """Score the joint reply (one string per agent). Must not raise for any strings."""
