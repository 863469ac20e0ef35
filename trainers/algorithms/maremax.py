"""MAReMax: multi-agent REINFORCE with the greedy joint reply as baseline (ReMax; Li et al., 2023, arXiv:2310.10505).

At each node the rollout also decodes one greedy reply per acting agent (temperature 0) and steps that
joint reply on its own env copy (``needs_greedy_baseline``); its return is the baseline:

    A_g,i = R_g,i − R_greedy,i

R_g,i is agent i's own return (``Group.agent_returns``; the joint return under the default joint
reward). The greedy reply is rolled out to the end of its turn and no further: its return is the
turn's reward (plus the solved-state rule of :func:`trainers.rollout.compute_returns`), so in
multi-turn trees the baseline omits the later turns that the sampled returns include. In the
sequential protocol (one agent per step, the turn paid at its last step) the greedy reply of agent
j is followed by the greedy replies of the turn's later agents, so the baseline is
gamma^(L−1−j) times the greedy turn's reward, not 0. Cost: one extra batched greedy generation and
env step per node (per level to the turn's end in the sequential protocol).
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, policy_gradient_loss
from trainers.rollout import Group


class MAReMax(AlgorithmBase):
    zero_loss_at_zero_advantage = True  # the clipped surrogate is 0 at A = 0
    needs_greedy_baseline = True

    def advantages(self, group: Group) -> np.ndarray:
        if group.greedy is None:
            raise ValueError("maremax needs the greedy joint reply of each node: roll out with greedy_sampler "
                             "(the trainer does when the algorithm declares needs_greedy_baseline).")
        greedy = group.greedy
        baseline = np.array([greedy.agent_returns.get(a, greedy.return_) for a in group.agents])
        self.log("greedy_return", float(greedy.return_))
        return group.returns_per_agent() - baseline  # [S, N]

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)
