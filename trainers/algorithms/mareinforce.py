"""MAREINFORCE: multi-agent REINFORCE with a fixed baseline, the ablation of MAGRPO's group baseline.

A_g = R_g − b for every agent, with a constant ``baseline`` b (default 0): no sibling comparison, so
the gradient has higher variance than MAGRPO's. Useful to show what the group-relative baseline buys.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import LossBatch, policy_gradient_loss, register_algorithm
from trainers.rollout import Group


@register_algorithm("mareinforce")
class MAREINFORCE:
    zero_loss_at_zero_advantage = True
    """The clipped surrogate is 0 at A = 0; with a KL term the trainer does not skip anything."""

    def __init__(self, baseline: float = 0.0) -> None:
        self.baseline = float(baseline)

    def advantages(self, group: Group) -> np.ndarray:
        return np.asarray(group.returns, dtype=np.float64) - self.baseline

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
