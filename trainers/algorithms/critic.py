"""What the actor-critic algorithms (``mappo``, ``iac``, ``maac``) share: value heads on the frozen base
model, GAE, and the fit of the heads to their value targets.

A critic here is a linear map from the base model's last hidden state (adapters off, no gradient into
the base) to one value per head: one head for a centralised critic, one per agent for independent
critics. One base model reads every agent's tokens, the first agent's (the shared base, or the first
of separate ones), so the agents must share a tokenizer. Each step,
:meth:`CriticAlgorithm.advantages` reads values under no grad and records (features, head, value,
target); :meth:`CriticAlgorithm.modules_loss` then regresses the heads on those targets,
c · mean (V − V̂)², and logs ``value_loss``, ``explained_variance`` and ``value_mean``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from trainers.algorithms.base import AlgorithmBase, LossBatch, policy_gradient_loss


class ValueHeads(torch.nn.Linear):
    """``count`` linear value heads on [*, H] features, zero at the start (V ≡ 0 whatever the seed).

    Row k of the weight is head k; ``forward(features, heads)`` gives each row of ``features`` the
    value of its own head (all heads when ``heads`` is None). AdamW treats every parameter on its
    own, so the heads learn independently under one optimizer."""

    def __init__(self, hidden: int, count: int = 1) -> None:
        super().__init__(hidden, count)
        torch.nn.init.zeros_(self.weight)
        torch.nn.init.zeros_(self.bias)

    def forward(self, features: torch.Tensor, heads: torch.Tensor | None = None) -> torch.Tensor:
        values = super().forward(features)
        return values if heads is None else values.gather(-1, heads.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def hidden_states(policies, sequences: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    """[len(sequence), H] per sequence: the last hidden state of the first agent's base model (adapters
    off) at every position, from one right-padded batched forward pass."""
    slot = policies.slots[policies.agents[0]]
    width = max(len(s) for s in sequences)
    rows = [list(s) + [0] * (width - len(s)) for s in sequences]
    mask = [[1] * len(s) + [0] * (width - len(s)) for s in sequences]
    device = policies.device
    off = slot.model.disable_adapter() if slot.adapter is not None else contextlib.nullcontext()
    with off:
        out = slot.model(input_ids=torch.tensor(rows, device=device), attention_mask=torch.tensor(mask, device=device),
                         output_hidden_states=True, logits_to_keep=1)
    states = out.hidden_states[-1].float()
    return [states[row, : len(s)] for row, s in enumerate(sequences)]


def gae(values: torch.Tensor, final_reward: float, gamma: float = 1.0, lam: float = 1.0) -> torch.Tensor:
    """Advantages of an episode with values ``values`` [T] and reward ``final_reward`` after its last
    step (0 before), V_T = 0: δ_t = r_t + γ V_{t+1} − V_t, A_t = Σ_k (γλ)^k δ_{t+k} (Schulman et al.,
    2016). One step (T = 1) gives A = R − V."""
    advantages, running, following = torch.zeros_like(values), 0.0, 0.0
    for t in range(len(values) - 1, -1, -1):
        reward = final_reward if t == len(values) - 1 else 0.0
        delta = reward + gamma * following - float(values[t])
        running = delta + gamma * lam * running
        advantages[t], following = running, float(values[t])
    return advantages


def explained_variance(values: torch.Tensor, targets: torch.Tensor) -> float:
    """1 − Var[targets − values] / Var[targets]: 1 for a perfect critic, 0 for a constant one (and 0 when
    the targets are constant)."""
    spread = float(targets.var(unbiased=False))
    return 0.0 if spread == 0 else 1.0 - float((targets - values).var(unbiased=False)) / spread


class CriticAlgorithm(AlgorithmBase):
    """An actor-critic on the shared policy-gradient loss: owns ``value_head`` (:class:`ValueHeads`)
    and fits it each step to the targets that :meth:`remember` recorded. Subclasses write
    :meth:`advantages` and may set :meth:`head_count`."""

    zero_loss_at_zero_advantage = True

    def __init__(self, value_coef: float = 1.0, value_lr: float = 1e-3, value_updates: int = 1, **loss_options) -> None:
        super().__init__(**loss_options)
        self.value_coef, self.value_lr, self.module_updates = float(value_coef), float(value_lr), int(value_updates)
        self._fit: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def head_count(self, policies) -> int:
        return 1

    def build_modules(self, policies) -> dict[str, torch.nn.Module]:
        self.policies = policies
        first = policies.slots[policies.agents[0]]
        vocab = first.tokenizer.get_vocab()
        others = [slot.tokenizer for slot in policies.slots.values() if slot.tokenizer is not first.tokenizer]
        if any(tokenizer.get_vocab() != vocab for tokenizer in others):
            raise ValueError(f"{type(self).__name__}'s critic reads every agent's tokens with one base model: "
                             "the agents must share a tokenizer.")
        hidden = first.model.config.hidden_size
        self.head = ValueHeads(hidden, self.head_count(policies))
        return {"value_head": self.head}

    def build_optimizer(self, name: str, module: torch.nn.Module) -> torch.optim.Optimizer:
        return torch.optim.AdamW(module.parameters(), lr=self.value_lr, weight_decay=0.0)

    def on_step_start(self, step: int) -> None:
        self._fit = []

    @torch.no_grad()
    def value(self, features: torch.Tensor, head: int = 0) -> torch.Tensor:
        """The values of head ``head`` on features [T, H], under no grad."""
        return self.head(features)[:, head]

    def remember(self, features: torch.Tensor, head: int, values: torch.Tensor, targets: torch.Tensor) -> None:
        """Fit head ``head`` on these features to ``targets`` in this step's :meth:`modules_loss`."""
        self._fit.append((features, torch.full((len(values),), head, device=features.device), values, targets))

    def reply_advantages(self, observations: Sequence[Sequence[int]], head: int, returns) -> np.ndarray:
        """A reply is one action: A = R − V(o) for each (observation token ids, return) pair, with V
        head ``head`` on the state at the end of the observation, fitted to R. Siblings share their
        observations: one forward pass per distinct one."""
        distinct = list(dict.fromkeys(tuple(o) for o in observations))
        states = dict(zip(distinct, (state[-1:] for state in hidden_states(self.policies, distinct))))
        advantages = np.zeros(len(observations))
        for row, (observation, target) in enumerate(zip(observations, returns)):
            features = states[tuple(observation)]
            values = self.value(features, head)
            self.remember(features, head, values, torch.full_like(values, float(target)))
            advantages[row] = float(target) - float(values[0])
        return advantages

    def loss(self, batch: LossBatch) -> torch.Tensor:
        return policy_gradient_loss(batch)

    def modules_loss(self, modules: Mapping[str, torch.nn.Module]) -> torch.Tensor:
        head = modules["value_head"]
        if not self._fit:  # nothing to fit on this process: a zero loss still joins the others' all-reduce
            return head(torch.zeros(1, self.head.in_features, device=self.head.weight.device)).sum() * 0.0
        features, heads, before, targets = (torch.cat(column) for column in zip(*self._fit))
        loss = self.value_coef * torch.mean((head(features, heads) - targets) ** 2)
        self.log("value_loss", float(loss.detach()))
        self.log("explained_variance", explained_variance(before, targets))
        self.log("value_mean", float(before.mean()))
        return loss
