"""GRPO with one agent doing the whole task (Shao et al., 2024, arXiv:2402.03300).

The single-agent baseline of the MAGRPO paper: one policy answers alone (e.g. ``humaneval-v0``
with ``team="single"``), its G replies to a prompt form the group, and the advantage is the group-normalised reward
A_g = (R_g − mean R) / (std R + ε) (GRPO's outcome supervision, Sec. 4.1.2).

With a multi-agent env it refuses unless ``policy: shared`` (one model playing every role), since
"one agent does the whole task" would otherwise be false.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, group_relative, policy_gradient_loss
from trainers.rollout import Group


class GRPO(AlgorithmBase):
    single_agent = True  # a multi-agent env needs ``policy: shared``

    zero_loss_at_zero_advantage = True  # the clipped surrogate is 0 at A = 0 (with a KL term nothing is skipped)

    def __init__(self, normalize_std: bool = True, eps: float = 1e-6, **loss_options) -> None:
        super().__init__(**loss_options)
        self.normalize_std = normalize_std
        self.eps = eps

    def advantages(self, group: Group) -> np.ndarray:
        return group_relative(group.returns, self.normalize_std, self.eps)

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
