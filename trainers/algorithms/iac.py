"""IAC: independent actor-critic, one critic per agent on the agent's own observation and reward.

Every agent i has its own value head V_i (head i of :class:`~trainers.algorithms.critic.ValueHeads`
on the base model's last hidden state at the end of agent i's own prompt o_i: decentralised,
the other agents are part of its environment). A reply is one action; with R_i agent i's own return
(its own reward under ``reward_mode="per_agent"``, the joint one otherwise):

    A_i = R_i − V_i(o_i),        V_i fitted to R_i

Independent learners (Tan, 1993) with a state-value critic each: the IAC-V baseline of Foerster et
al. (2018, COMA, arXiv:1705.08926), and IAC as CoMLRL, the library of Liu et al. (2025,
arXiv:2508.04652), describes it.
"""

from __future__ import annotations

import numpy as np

from trainers.algorithms.critic import CriticAlgorithm
from trainers.rollout import Group


class IAC(CriticAlgorithm):
    def head_count(self, policies) -> int:
        return len(policies.agents)

    def advantages(self, group: Group) -> np.ndarray:
        returns = group.returns_per_agent()
        columns = [self.reply_advantages([s.replies[agent].prompt_ids for s in group.samples],
                                         self.policies.agents.index(agent), returns[:, column])
                   for column, agent in enumerate(group.agents)]
        return np.stack(columns, axis=1)
