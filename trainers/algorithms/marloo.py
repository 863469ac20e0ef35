"""MARLOO: multi-agent REINFORCE with a leave-one-out baseline (RLOO; Kool et al., 2019; Ahmadian et al., 2024).

Each joint sample is compared with the mean of its G − 1 siblings, not with a mean that includes
itself, so the baseline is independent of the sample and the estimator unbiased:

    A_g,i = R_g,i − (1/(G−1)) Σ_{g'≠g} R_g',i  =  G/(G−1) · (R_g,i − mean_g' R_g',i)

R_g,i is agent i's own return (``Group.agent_returns``): the joint return under the default joint
reward, each agent's own under a per-agent reward mode. Loss: the shared policy-gradient loss.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, leave_one_out, policy_gradient_loss
from trainers.rollout import Group


class MARLOO(AlgorithmBase):
    zero_loss_at_zero_advantage = True  # the clipped surrogate is 0 at A = 0

    def advantages(self, group: Group) -> np.ndarray:
        return leave_one_out(group.returns_per_agent())  # [S, N]

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
