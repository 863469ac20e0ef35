"""A step's metrics: ``reward/*`` and ``train/*`` from the rollout, the update's health counts (clipped
tokens, approximate KL, the sampler's log-prob gap), and their merge across processes. Step 5 of
:mod:`trainers.trainer`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from trainers.rollout import Group
from trainers.train_items import TrainItem


def reward_records(groups: Sequence[Group]) -> dict[str, Any]:
    """What ``reward/*`` and ``train/*`` are computed from: small, so every rank can send its own."""
    first = [s for g in groups if g.depth == 0 for s in g.samples]
    return {
        "first": [(s.reward, s.solved, s.return_, dict(s.components), dict(s.agent_rewards)) for s in first],
        "train/groups": len(groups), "train/joint_samples": sum(len(g.samples) for g in groups),
        "train/flat_groups": sum(float(np.ptp(g.returns) == 0) for g in groups),
        "train/groups_tests_vary": sum(float(_varies(g, TESTS_COMPONENTS)) for g in groups),
        "train/groups_coop_vary": sum(float(_varies(g, COOPERATION_COMPONENTS)) for g in groups),
    }


TESTS_COMPONENTS = ("tests",)


COOPERATION_COMPONENTS = ("uses_helper", "beyond_wrapper", "ignored_return")
"""The coding reward's components that pay for correctness and for cooperation: a group teaches
correctness (cooperation) only when these differ between its samples; formatting alone moves the others."""


def _varies(group: Group, names: Sequence[str]) -> bool:
    """True when some component of ``names`` takes more than one value among the group's samples."""
    return any(len({float(s.components.get(name, 0.0)) for s in group.samples}) > 1 for name in names
               if any(name in s.components for s in group.samples))


def clip_counts(batch: Any) -> tuple[float, float]:
    """(tokens whose clipped term is the active one in :func:`clipped_surrogate`, reply tokens): ρ
    above 1+ε with a positive advantage or below 1−ε with a negative one. ρ ≡ 1 on the first pass
    over a rollout taken as one minibatch, so this counts only from the second pass (or minibatch) on."""
    with torch.no_grad():
        ratio = torch.exp(batch.logps - batch.old_logps)
        advantages = batch.advantages.unsqueeze(-1) if batch.advantages.dim() == 1 else batch.advantages
        clipped = ((ratio > 1 + batch.clip_eps) & (advantages > 0)) | ((ratio < 1 - batch.clip_eps) & (advantages < 0))
        return float((clipped * batch.mask).sum()), float(batch.mask.sum())


def approx_kl_sum(batch: Any) -> tuple[float, float]:
    """(Σ over reply tokens of (ρ − 1) − log ρ, reply tokens), ρ = π_θ/π_old: the k3 estimate of
    KL(π_old‖π_θ) that CleanRL and TRL log as ``approx_kl``. 0 on a first pass (ρ ≡ 1)."""
    with torch.no_grad():
        log_ratio = (batch.logps - batch.old_logps) * batch.mask
        return float(((torch.exp(log_ratio) - 1 - log_ratio) * batch.mask).sum()), float(batch.mask.sum())


def sampler_gap(sampler: tuple[torch.Tensor, torch.Tensor] | None, old: torch.Tensor,
                mask: torch.Tensor) -> tuple[float, float]:
    """(Σ |log π_sampler − log π_old| over the reply tokens the sampler reported, their count)."""
    if sampler is None:
        return 0.0, 0.0
    values, known = sampler
    known = known * mask
    return float(((values - old).abs() * known).sum()), float(known.sum())


STEP_COUNTS = ("train/groups", "train/joint_samples", "train/flat_groups", "train/groups_tests_vary",
               "train/groups_coop_vary")
"""Counts over a step's groups, summed over ranks."""


def metrics_from_records(records: Mapping[str, Any]) -> dict[str, float]:
    first = records["first"]
    rewards = np.array([r[0] for r in first]) if first else np.zeros(1)
    metrics = {
        "reward/mean": float(rewards.mean()), "reward/std": float(rewards.std()), "reward/max": float(rewards.max()),
        "reward/solved_rate": float(np.mean([r[1] for r in first])) if first else 0.0,
        "reward/return_mean": float(np.mean([r[2] for r in first])) if first else 0.0,
        **{name: records[name] for name in STEP_COUNTS if name in records},
    }
    components: dict[str, list[float]] = defaultdict(list)
    own: dict[str, list[float]] = defaultdict(list)
    for *_, parts, agent_rewards in first:
        for name, value in parts.items():
            components[name].append(value)
        for agent, value in agent_rewards.items():
            own[agent].append(value)
    metrics.update({f"reward/{name}": float(np.mean(v)) for name, v in components.items()})
    metrics.update({f"agent/{agent}/reward": float(np.mean(v)) for agent, v in own.items()})
    return metrics


def merge_rank_metrics(per_rank: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """One step's metrics over every rank: ``reward/*`` and ``train/*`` over all ranks' samples (as if
    one process had rolled them all out); ``agent/*`` the mean of the ranks' values (the gradient is
    the mean of the ranks' gradients; grad norms are taken after the all-reduce, so they agree);
    ``perf/*`` the slowest rank's times and the sum of tokens and problems."""
    records = {
        "first": [r for rank in per_rank for r in rank["rewards"]["first"]],
        **{name: sum(rank["rewards"][name] for rank in per_rank)
           for name in STEP_COUNTS},
    }
    agents: dict[str, list[float]] = defaultdict(list)
    for rank in per_rank:
        for name, value in rank["agents"].items():
            agents[name].append(value)
    perf = {name: max(rank["perf"][name] for rank in per_rank) for name in ("perf/rollout_s", "perf/update_s", "perf/step_s")}
    for name in ("perf/generated_tokens", "perf/problems"):
        perf[name] = sum(rank["perf"][name] for rank in per_rank)
    perf["perf/tokens_per_s"] = perf["perf/generated_tokens"] / max(perf["perf/rollout_s"], 1e-9)
    perf["perf/problems_per_s"] = perf.pop("perf/problems") / max(perf["perf/step_s"], 1e-9)
    if all("perf/threads" in rank["perf"] for rank in per_rank):
        perf["perf/threads"] = min(rank["perf"]["perf/threads"] for rank in per_rank)
    return {**metrics_from_records(records), **{k: float(np.mean(v)) for k, v in agents.items()}, **perf}


def item_metrics(agent: str, items: list[TrainItem]) -> dict[str, float]:
    if not items:
        return {}
    return {
        f"agent/{agent}/advantage_abs_mean": float(np.mean([abs(i.advantage) for i in items])),
        f"agent/{agent}/reply_tokens": float(np.mean([len(i.completion_ids) for i in items])),
    }
