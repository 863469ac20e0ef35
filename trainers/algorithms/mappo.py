"""MAPPO: multi-agent PPO with a centralised value function (Yu et al., 2022, arXiv:2103.01955).

The critic is a linear value head on the shared base model's last hidden state. Its input is
centralised: every acting agent's prompt (the joint observation), then agent i's reply, so V sees
what all agents saw. Each token t of agent i's reply is one step of an episode that ends with the
reply: the reward is 0 except after the last token, where it is the reply's return R (the joint
return, or the agent's own with ``own_returns``). With V_t the value before token t and V_T = 0,
per-token GAE (Schulman et al., 2016, arXiv:1506.02438) gives

    δ_t = r_t + γ V_{t+1} − V_t,        A_t = Σ_k (γλ)^k δ_{t+k},        V̂_t = A_t + V_t

The policy minimises the clipped surrogate with the per-token A_t (the shared loss); the head
minimises c · mean_t (V_t − V̂_t)² over the step's tokens, with its own optimizer. The hidden states
come from the base model with the adapters off, under no grad: the critic does not move the
policies' weights. Logged: ``value_loss``, ``explained_variance`` (1 − Var[V̂ − V] / Var[V̂], of
the values before the head's update) and ``value_mean``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, policy_gradient_loss
from trainers.rollout import Group


class MAPPO(AlgorithmBase):
    def __init__(self, gae_lambda: float = 0.95, token_gamma: float = 1.0, value_coef: float = 1.0,
                 value_lr: float = 1e-3, value_updates: int = 1, own_returns: bool = False, **loss_options) -> None:
        super().__init__(**loss_options)
        self.gae_lambda, self.token_gamma, self.value_coef = float(gae_lambda), float(token_gamma), float(value_coef)
        self.value_lr, self.module_updates, self.own_returns = float(value_lr), int(value_updates), bool(own_returns)
        self._features: list[torch.Tensor] = []  # [T, H] per reply of the step
        self._targets: list[torch.Tensor] = []  # [T] value targets V̂
        self._values: list[torch.Tensor] = []  # [T] values when the advantages were computed

    # ----------------------------------------------------------------- the critic
    def build_modules(self, policies) -> dict[str, torch.nn.Module]:
        self.policies = policies
        hidden = policies.slots[policies.agents[0]].model.config.hidden_size
        self.head = torch.nn.Linear(hidden, 1)
        torch.nn.init.zeros_(self.head.weight)  # V ≡ 0 at the start, whatever the seed
        torch.nn.init.zeros_(self.head.bias)
        return {"value_head": self.head}

    def build_optimizer(self, name: str, module: torch.nn.Module) -> torch.optim.Optimizer:
        return torch.optim.AdamW(module.parameters(), lr=self.value_lr, weight_decay=0.0)

    @torch.no_grad()
    def features(self, agent: str, joint_prompt: list[int], completions: list[tuple[int, ...]]) -> list[torch.Tensor]:
        """Per reply, [T, H]: the base model's last hidden state before each reply token."""
        slot = self.policies.slots[agent]
        pad, width = 0, len(joint_prompt) + max(len(c) for c in completions)
        rows = [joint_prompt + list(c) + [pad] * (width - len(joint_prompt) - len(c)) for c in completions]
        mask = [[1] * (len(joint_prompt) + len(c)) + [0] * (width - len(joint_prompt) - len(c)) for c in completions]
        device = self.policies.device
        off = slot.model.disable_adapter() if slot.adapter is not None else contextlib.nullcontext()
        with off:
            out = slot.model(input_ids=torch.tensor(rows, device=device), attention_mask=torch.tensor(mask, device=device),
                             output_hidden_states=True, logits_to_keep=1)
        states, start = out.hidden_states[-1].float(), len(joint_prompt) - 1
        return [states[row, start : start + len(c)] for row, c in enumerate(completions)]

    def gae(self, values: torch.Tensor, final_reward: float) -> torch.Tensor:
        """Per-token advantages of one reply: reward ``final_reward`` after its last token, V_T = 0."""
        advantages, running, following = torch.zeros_like(values), 0.0, 0.0
        for t in range(len(values) - 1, -1, -1):
            reward = final_reward if t == len(values) - 1 else 0.0
            delta = reward + self.token_gamma * following - float(values[t])
            running = delta + self.token_gamma * self.gae_lambda * running
            advantages[t], following = running, float(values[t])
        return advantages

    # ----------------------------------------------------------------- the protocol
    def on_step_start(self, step: int) -> None:
        self._features, self._targets, self._values = [], [], []

    def advantages(self, group: Group) -> list[list[np.ndarray]]:
        returns = group.returns_per_agent() if self.own_returns else np.repeat(group.returns[:, None], len(group.agents), 1)
        table = [[np.zeros(0)] * len(group.agents) for _ in group.samples]
        for column, agent in enumerate(group.agents):
            # Siblings share their observations: one batched forward per distinct joint prompt.
            batches: dict[tuple[int, ...], list[int]] = {}
            for row, sample in enumerate(group.samples):
                if sample.replies[agent].completion_ids:
                    joint = tuple(t for a in group.agents for t in sample.replies[a].prompt_ids)
                    batches.setdefault(joint, []).append(row)
            for joint, rows in batches.items():
                completions = [group.samples[row].replies[agent].completion_ids for row in rows]
                for row, feats in zip(rows, self.features(agent, list(joint), completions)):
                    with torch.no_grad():
                        values = self.head(feats).squeeze(-1)
                    advantage = self.gae(values, float(returns[row, column]))
                    self._features.append(feats)
                    self._values.append(values)
                    self._targets.append(advantage + values)
                    table[row][column] = advantage.cpu().numpy()
        return table

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)

    def modules_loss(self, modules: Mapping[str, torch.nn.Module]) -> torch.Tensor | None:
        if not self._features:  # nothing to fit on this process: a zero loss still joins the others' all-reduce
            return modules["value_head"](torch.zeros(1, self.head.in_features, device=self.head.weight.device)).sum() * 0.0
        targets, before = torch.cat(self._targets), torch.cat(self._values)
        values = modules["value_head"](torch.cat(self._features)).squeeze(-1)
        loss = self.value_coef * torch.mean((values - targets) ** 2)
        self.log("value_loss", float(loss.detach()))
        self.log("explained_variance", explained_variance(before, targets))
        self.log("value_mean", float(before.mean()))
        return loss


def explained_variance(values: torch.Tensor, targets: torch.Tensor) -> float:
    """1 − Var[targets − values] / Var[targets]: 1 for a perfect critic, 0 for a constant one (0 when targets are constant)."""
    spread = float(targets.var(unbiased=False))
    return 0.0 if spread == 0 else 1.0 - float((targets - values).var(unbiased=False)) / spread
