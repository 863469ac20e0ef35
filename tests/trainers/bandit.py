"""A tiny scripted env and a tabular policy, to check that an algorithm's advantages and loss learn.

Each agent answers with one of a few fixed replies; the env (a real :class:`CoopEnv`) pays the helper
for ``"a"`` and main for ``"b"``. The policy of each agent is a softmax over the replies (one logit per
reply), so one reply is one token and its log-prob is a log-softmax entry. Rollouts go through the
trainer's own :func:`~trainers.rollout.grow_trees` (greedy replies too, for algorithms that need them);
advantages and losses come from the algorithm under test, with its own loss options.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from llm_coop_envs.core import CoopEnv, Evaluation, RewardResult
from trainers.algorithms.base import Capabilities, LossBatch
from trainers.generation.base import Completion
from trainers.rollout import grow_trees, root_node

CHOICES = ("a", "b", "c")
BEST = {"helper": "a", "main": "b"}


class PickTask:
    """Pays each agent 1 for its own best reply; joint reward = the sum, or per agent on request."""

    def __init__(self, agents: tuple[str, ...] = ("helper", "main"), per_agent: bool = False) -> None:
        self.agents = agents
        self.per_agent = per_agent

    def __len__(self) -> int:
        return 2

    def task_id(self, index: int) -> str:
        return f"pick/{index}"

    def prompt(self, index: int, agent: str) -> str:
        return f"Pick one of {CHOICES}, {agent}."

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        hits = {agent: float(replies[agent].strip() == BEST[agent]) for agent in self.agents}
        own = {agent: RewardResult.from_components({agent: hits[agent]}) for agent in self.agents}
        return Evaluation(RewardResult.from_components(hits), solved=all(hits.values()),
                          agent_rewards=own if self.per_agent else None)


class TabularPolicy:
    def __init__(self, agents: tuple[str, ...], seed: int = 0) -> None:
        self.logits = {agent: torch.zeros(len(CHOICES), requires_grad=True) for agent in agents}
        self.generator = torch.Generator().manual_seed(seed)

    def sample(self, requests, n):
        out = []
        for agent, _ in requests:
            probs = torch.softmax(self.logits[agent].detach(), -1)
            picks = torch.multinomial(probs, n, replacement=True, generator=self.generator).tolist()
            out.append([Completion(CHOICES[i], (), (i,)) for i in picks])
        return out

    def greedy(self, requests, n):
        return [[Completion(CHOICES[int(self.logits[a].argmax())], (), (int(self.logits[a].argmax()),))] * n
                for a, _ in requests]

    def prob_of_best(self, agent: str) -> float:
        return float(torch.softmax(self.logits[agent].detach(), -1)[CHOICES.index(BEST[agent])])


def train_bandit(algorithm, agents=("helper", "main"), per_agent=False, steps=40, group_size=4, lr=0.3) -> TabularPolicy:
    """Train the tabular policy with ``algorithm``; returns it (see :meth:`TabularPolicy.prob_of_best`)."""
    policy = TabularPolicy(agents)
    optimizer = torch.optim.SGD(list(policy.logits.values()), lr=lr)
    declared = Capabilities.of(algorithm)
    options = declared.loss_options
    greedy = policy.greedy if declared.needs_greedy_baseline else None
    for step in range(steps):
        roots = [root_node(CoopEnv(PickTask(agents, per_agent)), seed=step * 2 + i) for i in range(2)]
        groups = grow_trees(roots, policy.sample, group_size=group_size, greedy_sampler=greedy)
        picks: dict[str, list[tuple[int, float]]] = {agent: [] for agent in agents}
        for group in groups:
            advantages = np.asarray(algorithm.advantages(group), dtype=np.float64)
            if advantages.ndim == 1:
                advantages = np.repeat(advantages[:, None], len(group.agents), axis=1)
            for sample, row in zip(group.samples, advantages):
                for agent, advantage in zip(group.agents, row):
                    picks[agent].append((sample.replies[agent].completion_ids[0], float(advantage)))
        optimizer.zero_grad()
        for agent, items in picks.items():
            chosen = torch.tensor([i for i, _ in items])
            logps = torch.log_softmax(policy.logits[agent], -1)[chosen].unsqueeze(-1)
            batch = LossBatch(
                agent=agent, logps=logps, old_logps=logps.detach(), mask=torch.ones_like(logps),
                advantages=torch.tensor([a for _, a in items]), total_replies=len(items),
                clip_eps=options.clip_eps, kl_coef=options.kl_coef, token_aggregation=options.token_aggregation,
            )
            algorithm.loss(batch).backward()
        optimizer.step()
    return policy
