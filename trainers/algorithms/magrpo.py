"""MAGRPO: multi-agent group-relative policy optimisation (Liu et al., 2025, arXiv:2508.04652).

Centralised training, decentralised execution: at each node of the rollout tree the G (or G^N) sibling
joint samples share the joint return, and every agent gets the same group-relative advantage

    A_g = R_g − (1/G) Σ_g' R_g'          (optionally divided by the siblings' std)

where R_g is the discounted joint return of sample g (reward plus γ times the mean return of its
children, :func:`trainers.rollout.compute_returns`). Each agent i minimises, over its own replies,

    L_i = −(1/G) Σ_g A_g · log π_i(reply_i,g | own observation_i)

(token aggregation: see :func:`trainers.algorithms.base.aggregate`). With several inner epochs the
log-prob is replaced by the clipped ratio objective, and a KL penalty to the initial policy can be
added (both as in GRPO, Shao et al., 2024, arXiv:2402.03300, Eqs. 3–4).

``own_returns=True`` uses each agent's own return R_g,i (``Group.agent_returns``, from an env's
per-agent reward mode) in place of the joint R_g: independent learners with MAGRPO's baseline.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, group_relative, policy_gradient_loss
from trainers.rollout import Group


class MAGRPO(AlgorithmBase):
    """The bundled default. ``normalize_std=True`` divides advantages by the siblings' std."""

    zero_loss_at_zero_advantage = True  # the clipped surrogate is 0 at A = 0 (with a KL term nothing is skipped)

    def __init__(self, normalize_std: bool = False, eps: float = 1e-6, own_returns: bool = False,
                 **loss_options) -> None:
        super().__init__(**loss_options)
        self.normalize_std = normalize_std
        self.eps = eps
        self.own_returns = own_returns

    def advantages(self, group: Group) -> np.ndarray:
        if self.own_returns:
            columns = group.returns_per_agent().T
            return np.stack([group_relative(c, self.normalize_std, self.eps) for c in columns], axis=1)
        return group_relative(group.returns, self.normalize_std, self.eps)

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
