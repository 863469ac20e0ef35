"""MAPPO: multi-agent PPO with a centralised value function (Yu et al., 2022, arXiv:2103.01955).

The critic is a linear value head on the shared base model's last hidden state
(:mod:`trainers.algorithms.critic`). Its input is centralised: every acting agent's prompt (the joint
observation), then agent i's reply, so V sees what all agents saw. Each token t of agent i's reply
is one step of an episode that ends with the reply: the reward is 0 except after the last token,
where it is the reply's return R (the joint return, or the agent's own with ``own_returns``). With
V_t the value before token t and V_T = 0, per-token GAE (Schulman et al., 2016, arXiv:1506.02438)
gives

    δ_t = r_t + γ V_{t+1} − V_t,        A_t = Σ_k (γλ)^k δ_{t+k},        V̂_t = A_t + V_t

The policy minimises the clipped surrogate with the per-token A_t (the shared loss); the head
minimises c · mean_t (V_t − V̂_t)² over the step's tokens, with its own optimizer.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.algorithms.critic import CriticAlgorithm, gae, hidden_states
from trainers.rollout import Group


class MAPPO(CriticAlgorithm):
    def __init__(self, gae_lambda: float = 0.95, token_gamma: float = 1.0, own_returns: bool = False,
                 **options) -> None:
        super().__init__(**options)
        self.gae_lambda, self.token_gamma, self.own_returns = float(gae_lambda), float(token_gamma), bool(own_returns)

    def gae(self, values: torch.Tensor, final_reward: float) -> torch.Tensor:
        """Per-token advantages of one reply: reward ``final_reward`` after its last token, V_T = 0."""
        return gae(values, final_reward, self.token_gamma, self.gae_lambda)

    def advantages(self, group: Group) -> list[list[np.ndarray]]:
        joint = np.repeat(group.returns[:, None], len(group.agents), 1)
        returns = group.returns_per_agent() if self.own_returns else joint
        table = [[np.zeros(0)] * len(group.agents) for _ in group.samples]
        for column, agent in enumerate(group.agents):
            rows = [row for row, sample in enumerate(group.samples) if sample.replies[agent].completion_ids]
            if not rows:
                continue
            # The state before reply token t is the hidden state at the position before it.
            joints = [[t for a in group.agents for t in group.samples[row].replies[a].prompt_ids] for row in rows]
            replies = [group.samples[row].replies[agent].completion_ids for row in rows]
            states = hidden_states(self.policies, [j + list(r) for j, r in zip(joints, replies)])
            for row, joint, reply, state in zip(rows, joints, replies, states):
                features = state[len(joint) - 1 : len(joint) - 1 + len(reply)]
                values = self.value(features)
                advantage = self.gae(values, float(returns[row, column]))
                self.remember(features, 0, values, advantage + values)
                table[row][column] = advantage.cpu().numpy()
        return table
