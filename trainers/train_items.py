"""The update's inputs: each reply of a rollout as a :class:`TrainItem` with its advantage, its share of
its agent's loss (:func:`reply_weights`), and what the update reads per micro-batch (the sampler's
log-probs and their importance weights, the gradient clip). Step 4 of :mod:`trainers.trainer`."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from trainers.algorithms.base import Advantage
from trainers.fsdp import full_tensor


@dataclasses.dataclass(frozen=True)
class TrainItem:
    """One agent's reply in one joint sample, with its advantage."""

    agent: str
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    advantage: float
    sample: int = 0
    """Index of the reply's joint sample among the step's (on this process), in rollout order."""
    weight: float = 1.0
    """The reply's share of its agent's loss for the step (:func:`reply_weights`)."""
    token_advantages: tuple[float, ...] | None = None
    """One advantage per completion token, when the algorithm gave them (``advantage`` is then their mean)."""
    sampler_logps: tuple[float, ...] | None = None
    """The sampler's log-prob of each completion token, when the backend reported them."""

    @property
    def loss_advantage(self) -> Advantage:
        return self.token_advantages if self.token_advantages is not None else self.advantage

    @property
    def is_zero(self) -> bool:
        return not any(self.token_advantages) if self.token_advantages is not None else self.advantage == 0.0


def train_item(agent: str, reply: Any, advantage: Advantage, sample: int = 0) -> TrainItem:
    logps = getattr(reply, "logprobs", None)
    logps = tuple(logps) if logps is not None and len(logps) == len(reply.completion_ids) else None
    if isinstance(advantage, tuple):  # per token: their mean stands for the reply in the metrics
        mean = float(np.mean(advantage)) if advantage else 0.0
        return TrainItem(agent, reply.prompt_ids, reply.completion_ids, mean, sample, token_advantages=advantage,
                         sampler_logps=logps)
    return TrainItem(agent, reply.prompt_ids, reply.completion_ids, advantage, sample, sampler_logps=logps)


def rescaled(items: list[TrainItem], total: float | None = None) -> list[TrainItem]:
    """``items`` with their weights divided by ``total`` (default: their sum), so that a minibatch's
    weights sum to 1 over every process's share of it."""
    total = sum(item.weight for item in items) if total is None else total
    return [dataclasses.replace(item, weight=item.weight / total) for item in items] if total > 0 else list(items)


def item_totals(items: Sequence[TrainItem]) -> dict[str, float]:
    """What a minibatch's normalisation needs from one process: its weights, replies and reply tokens."""
    return {"weight": sum(i.weight for i in items), "replies": len(items),
            "tokens": float(sum(len(i.completion_ids) for i in items))}


def sampler_logps(items: Sequence[TrainItem], like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The sampler's log-probs of a micro-batch as [B, T] (0 where unknown) and which entries are known."""
    if all(item.sampler_logps is None for item in items):
        return None
    values, known = torch.zeros_like(like), torch.zeros_like(like)
    for row, item in enumerate(items):
        if item.sampler_logps is not None:
            values[row, : len(item.sampler_logps)] = torch.tensor(item.sampler_logps, dtype=like.dtype)
            known[row, : len(item.sampler_logps)] = 1.0
    return values, known


def importance_weights(sampler: tuple[torch.Tensor, torch.Tensor] | None, old: torch.Tensor, mask: torch.Tensor,
                       cap: float | None) -> torch.Tensor | None:
    """Per token min(π_old / π_sampler, cap), 1 where the sampler gave no log-prob; ``None`` when off.
    Truncated importance sampling (Yao et al., 2025): the rollouts came from the sampler, the loss
    assumes π_old; capping keeps one improbable token from dominating the step."""
    if cap is None or sampler is None:
        return None
    values, known = sampler
    ratio = torch.exp((old - values) * known).clamp(max=cap)
    return (ratio * mask + (1 - mask)).detach()


def reply_weights(positions: Sequence[tuple[int, int]], nodes_at: Mapping[int, int] | None = None,
                  processes: int = 1) -> list[float]:
    """Each reply's weight in its agent's loss, from its (depth, node) in the step's rollout trees.

    Every turn (tree depth) weighs the same, every node of a turn the same, every reply of a node the
    same: w = 1 / (turns · nodes at its depth · replies of its node). Summed over the step, the weights
    are 1. This is MAGRPO's per-turn objective: the mean over turns of each node's group-relative
    term. Pooling every reply under one mean instead would give turn 1 (G replies) only a 1/(G+1) share
    against the G·G replies of turn 2. With one turn it is the plain mean over replies.

    With ``processes`` > 1, ``nodes_at`` is the number of nodes at each depth over every process's
    trees (:func:`depth_counts`, summed), and the weights are multiplied by ``processes``: DDP averages
    the processes' gradients, so the average of their losses is then the one-process loss over the
    global batch, whatever the shape of each process's trees."""
    per_node: dict[int, int] = defaultdict(int)
    for _, node in positions:
        per_node[node] += 1
    counts = dict(nodes_at) if nodes_at is not None else depth_counts(positions)
    turns = len(counts)
    return [processes / (turns * counts[depth] * per_node[node]) for depth, node in positions]


def depth_counts(positions: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Nodes at each depth among (depth, node) positions: what :func:`reply_weights` needs from every process."""
    nodes_at: dict[int, set[int]] = defaultdict(set)
    for depth, node in positions:
        nodes_at[depth].add(node)
    return {depth: len(nodes) for depth, nodes in nodes_at.items()}


def clip_gradients(params: list[torch.nn.Parameter], max_norm: float) -> float:
    grads = [p for p in params if p.grad is not None]
    if not grads:
        return 0.0
    if max_norm > 0:  # sharded gradients (FSDP): a norm over every rank's shards
        return float(full_tensor(torch.nn.utils.clip_grad_norm_(grads, max_norm)))
    return float(torch.linalg.vector_norm(torch.stack([full_tensor(p.grad.norm()) for p in grads])))
