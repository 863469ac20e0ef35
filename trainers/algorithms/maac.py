"""MAAC: multi-agent actor-critic with one centralised critic of the joint observation.

One value head V on the base model's last hidden state at the end of the joint observation
o = (o_1, …, o_N), every acting agent's prompt in turn (centralised training, decentralised
execution: the policies still see only their own prompt). A reply is one action; with R the joint
return, every agent gets the advantage of the joint value:

    A_i = R − V(o_1, …, o_N),        V fitted to R

The centralised critic of Lowe et al. (2017, MADDPG, arXiv:1706.02275) and Foerster et al. (2018,
COMA), as a state-value baseline for a stochastic policy gradient, the form CoMLRL's MAAC uses.
"""

from __future__ import annotations

import numpy as np

from trainers.algorithms.critic import CriticAlgorithm
from trainers.rollout import Group


class MAAC(CriticAlgorithm):
    def advantages(self, group: Group) -> np.ndarray:
        joint = [[t for agent in group.agents for t in sample.replies[agent].prompt_ids] for sample in group.samples]
        return self.reply_advantages(joint, 0, group.returns)
