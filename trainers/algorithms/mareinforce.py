"""MAREINFORCE: multi-agent REINFORCE with a fixed baseline, the ablation of MAGRPO's group baseline.

A_g = R_g − b for every agent, with a constant ``baseline`` b (default 0): no sibling comparison, so
the gradient has higher variance than MAGRPO's. Useful to show what the group-relative baseline buys.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, policy_gradient_loss
from trainers.rollout import Group


class MAREINFORCE(AlgorithmBase):
    zero_loss_at_zero_advantage = True  # the clipped surrogate is 0 at A = 0 (with a KL term nothing is skipped)

    def __init__(self, baseline: float = 0.0, **loss_options) -> None:
        super().__init__(**loss_options)
        self.baseline = float(baseline)

    def advantages(self, group: Group) -> np.ndarray:
        return np.asarray(group.returns, dtype=np.float64) - self.baseline

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
