"""The algorithm interface: two methods, plus a registry and the loss building blocks they share.

An algorithm sees one :class:`~trainers.rollout.Group` (the sibling joint samples at one node of a
rollout tree) and returns advantages; then, per agent, it turns token log-probs and those advantages
into a loss. Everything else (sampling, env steps, optimizers, logging, checkpoints) is the trainer's.

    @register_algorithm("my_algo")
    class MyAlgo:
        def __init__(self, **options): ...
        def advantages(self, group): return group.returns - group.returns.mean()
        def loss(self, batch): return policy_gradient_loss(batch)

An algorithm may declare ``zero_loss_at_zero_advantage = True`` when its loss of a reply with advantage
0 is exactly 0 (no KL term); the trainer then skips those replies' forward passes. Without the
declaration (the default for plug-ins) every reply reaches :meth:`Algorithm.loss`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from trainers.rollout import Group


@dataclasses.dataclass(frozen=True)
class LossBatch:
    """One agent's replies in a micro-batch, as tensors of shape [B, T] (T = longest reply)."""

    agent: str
    logps: torch.Tensor
    """log π_θ(token | prefix, own observation), with grad."""
    old_logps: torch.Tensor
    """The same under the policy that sampled the replies (detached); equals ``logps`` in the first epoch."""
    mask: torch.Tensor
    """1 for reply tokens, 0 for padding."""
    advantages: torch.Tensor
    """Shape [B]: one advantage per reply."""
    ref_logps: torch.Tensor | None = None
    """Log-probs under the initial policy, when a KL penalty is on."""
    clip_eps: float = 0.2
    kl_coef: float = 0.0
    token_aggregation: str = "token_sum"
    total_replies: int = 0
    """Replies of this agent in the whole step (the loss is scaled so micro-batches add up to the mean)."""
    total_tokens: float = 0.0
    """Reply tokens of this agent in the whole step (for ``token_mean``)."""
    weights: torch.Tensor | None = None
    """Shape [B]: each reply's weight in the step's loss (they sum to 1 over the step). The trainer
    weighs every turn of a multi-turn tree equally (:func:`trainers.trainer.reply_weights`);
    ``None`` means 1 / ``total_replies`` for every reply."""


@runtime_checkable
class Algorithm(Protocol):
    """What the trainer needs from an algorithm."""

    def advantages(self, group: Group) -> np.ndarray:
        """Shape [S] (same advantage for every agent) or [S, N] (one column per ``group.agents``)."""

    def loss(self, batch: LossBatch) -> torch.Tensor:
        """A scalar to minimise for one agent's micro-batch."""


# ---------------------------------------------------------------------------- registry
_REGISTRY: dict[str, Callable[..., Algorithm]] = {}


def register_algorithm(name: str, factory: Callable[..., Algorithm] | None = None):
    """Register ``factory`` (a class or function returning an :class:`Algorithm`) under ``name``.
    Usable as a decorator: ``@register_algorithm("mine")``."""

    def add(target: Callable[..., Algorithm]) -> Callable[..., Algorithm]:
        if not isinstance(name, str) or not name:
            raise ValueError("An algorithm name must be a non-empty string.")
        _REGISTRY[name] = target
        return target

    return add(factory) if factory is not None else add


def get_algorithm(name: str, **options: Any) -> Algorithm:
    """Build the registered algorithm ``name`` with ``options`` (``TrainConfig.algo_kwargs``)."""
    _load_bundled()
    if name not in _REGISTRY:
        raise KeyError(f"No algorithm named {name!r}; registered: {sorted(_REGISTRY)}.")
    algorithm = _REGISTRY[name](**options)
    for method in ("advantages", "loss"):
        if not callable(getattr(algorithm, method, None)):
            raise TypeError(f"Algorithm {name!r} has no {method}() method; see trainers.algorithms.base.Algorithm.")
    return algorithm


def registered_algorithms() -> list[str]:
    _load_bundled()
    return sorted(_REGISTRY)


def _load_bundled() -> None:
    import trainers.algorithms.grpo  # noqa: F401  (each bundled module registers itself)
    import trainers.algorithms.magrpo  # noqa: F401
    import trainers.algorithms.mareinforce  # noqa: F401


# ---------------------------------------------------------------------------- advantage math
def group_relative(returns: np.ndarray, normalize_std: bool = False, eps: float = 1e-6) -> np.ndarray:
    """A_i = R_i − mean_j R_j over the siblings, optionally divided by their std (GRPO's normalisation)."""
    returns = np.asarray(returns, dtype=np.float64)
    advantages = returns - returns.mean()
    if normalize_std:
        advantages = advantages / (returns.std() + eps)
    return advantages


# ---------------------------------------------------------------------------- loss building blocks
def aggregate(per_token: torch.Tensor, batch: LossBatch) -> torch.Tensor:
    """Reduce [B, T] per-token terms to the micro-batch's share of the step's loss.

    "Mean over replies" is the weighted sum with ``batch.weights`` (1 / replies when not given).

    * ``token_sum`` (default): sum over each reply's tokens, mean over replies — the REINFORCE
      estimator of −A·log π(reply), since log π(reply) is the sum of its token log-probs (MAGRPO's
      objective, as the paper and its authors' code write it).
    * ``sequence_mean``: mean over each reply's tokens, then mean over replies — every reply counts the
      same whatever its length (as in GRPO, Shao et al. 2024, Eq. 3).
    * ``token_mean``: mean over all reply tokens of the step — long replies weigh more (DAPO style);
      with weights, a token of reply i weighs w_i · replies / tokens.
    """
    mask = batch.mask
    replies = batch.total_replies or per_token.shape[0]
    weights = batch.weights if batch.weights is not None else torch.full(
        (per_token.shape[0],), 1.0 / replies, dtype=per_token.dtype, device=per_token.device
    )
    if batch.token_aggregation == "sequence_mean":
        per_reply = (per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)
        return (per_reply * weights).sum()
    if batch.token_aggregation == "token_sum":
        return ((per_token * mask).sum(-1) * weights).sum()
    if batch.token_aggregation == "token_mean":
        tokens = batch.total_tokens or float(mask.sum())
        return ((per_token * mask).sum(-1) * weights).sum() * replies / max(tokens, 1.0)
    raise ValueError(f"Unknown token_aggregation {batch.token_aggregation!r}.")


def clipped_surrogate(batch: LossBatch) -> torch.Tensor:
    """Per-token min(ρ·A, clip(ρ, 1±ε)·A) with ρ = π_θ/π_old (PPO; GRPO Eq. 3). With one epoch ρ ≡ 1
    and the gradient is exactly A·∇log π."""
    ratio = torch.exp(batch.logps - batch.old_logps)
    advantages = batch.advantages.unsqueeze(-1)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - batch.clip_eps, 1 + batch.clip_eps) * advantages
    return torch.minimum(unclipped, clipped)


def kl_to_reference(batch: LossBatch) -> torch.Tensor:
    """Per-token unbiased KL estimate π_ref/π − log(π_ref/π) − 1 ≥ 0 (GRPO, Shao et al. 2024, Eq. 4)."""
    if batch.ref_logps is None:
        return torch.zeros_like(batch.logps)
    delta = batch.ref_logps - batch.logps
    return torch.exp(delta) - delta - 1


def policy_gradient_loss(batch: LossBatch) -> torch.Tensor:
    """−(clipped surrogate − β·KL), aggregated: the loss MAGRPO, GRPO and MAREINFORCE share."""
    objective = clipped_surrogate(batch)
    if batch.kl_coef > 0:
        objective = objective - batch.kl_coef * kl_to_reference(batch)
    return -aggregate(objective, batch)
