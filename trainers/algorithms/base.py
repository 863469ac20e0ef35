"""The algorithm interface: two methods, an optional base class, and the loss building blocks they share.

An algorithm sees one :class:`~trainers.rollout.Group` (the sibling joint samples at one node of a
rollout tree) and returns advantages; then, per agent, it turns token log-probs and those advantages
into a loss. Everything else (sampling, env steps, optimizers, logging, checkpoints) is the trainer's.

    class MyAlgo(AlgorithmBase):
        def advantages(self, group): return group.returns - group.returns.mean()
        def loss(self, batch): return policy_gradient_loss(batch)

Any object with those two methods works (the :class:`Algorithm` protocol). Everything else the trainer
reads from an algorithm is one declared record, :class:`Capabilities` (flags such as ``single_agent``,
the loss options, the update schedule, the step hooks, owned modules), which the trainer builds once
per run from the algorithm's attributes of the same names, each missing one taking its documented
default. :class:`AlgorithmBase` declares those defaults, takes the loss options ``clip_eps``,
``kl_coef``, ``token_aggregation`` and the schedule ``minibatch_size``, ``updates_per_rollout`` as
constructor keywords (``algo_kwargs``), and adds a metrics channel (:meth:`AlgorithmBase.log`).
The registry is in :mod:`trainers.algorithms.registry`.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import torch

from trainers.algorithms.registry import get_algorithm, register_algorithm, registered_algorithms
from trainers.config import TOKEN_AGGREGATIONS
from trainers.rollout import Group

__all__ = [  # the registry's functions stay importable from here, as before
    "Algorithm", "AlgorithmBase", "Capabilities", "LossBatch", "LossOptions", "advantage_table", "advantage_tensor", "aggregate", "clipped_surrogate", "get_algorithm",
    "group_relative", "kl_to_reference", "leave_one_out", "policy_gradient_loss", "register_algorithm",
    "registered_algorithms",
]


@dataclasses.dataclass(frozen=True)
class LossBatch:
    """One agent's replies in a micro-batch, as tensors of shape [B, T] (T = longest reply)."""

    agent: str
    logps: torch.Tensor
    """log π_θ(token | prefix, own observation), with grad."""
    old_logps: torch.Tensor
    """The same under the policy that sampled the replies (detached); equals ``logps`` in the first epoch."""
    mask: torch.Tensor
    """1 for reply tokens, 0 for padding."""
    advantages: torch.Tensor
    """Shape [B]: one advantage per reply; [B, T] (0 on padding) when ``advantages()`` gave per-token ones."""
    ref_logps: torch.Tensor | None = None
    """Log-probs under the initial policy, when a KL penalty is on."""
    clip_eps: float = 0.2
    kl_coef: float = 0.0
    token_aggregation: str = "token_sum"
    total_replies: int = 0
    """Replies of this agent in the whole step (the loss is scaled so micro-batches add up to the mean)."""
    total_tokens: float = 0.0
    """Reply tokens of this agent in the whole step (for ``token_mean``)."""
    weights: torch.Tensor | None = None
    """Shape [B]: each reply's weight in the step's loss (they sum to 1 over the step). The trainer
    weighs every turn of a multi-turn tree equally (:func:`trainers.train_items.reply_weights`);
    ``None`` means 1 / ``total_replies`` for every reply."""
    importance_weights: torch.Tensor | None = None
    """Shape [B, T]: truncated importance weights min(π_old / π_sampler, cap) per reply token (detached),
    when the trainer corrects for a sampler that is not the trained model (``importance_cap``)."""


@runtime_checkable
class Algorithm(Protocol):
    """What the trainer needs from an algorithm."""

    def advantages(self, group: Group) -> np.ndarray:
        """Shape [S] (same advantage for every agent) or [S, N] (one column per ``group.agents``); or
        per-token: [S][N] entries that are each a number or an array [T] of the reply's token count
        (:func:`advantage_table`)."""

    def loss(self, batch: LossBatch) -> torch.Tensor:
        """A scalar to minimise for one agent's micro-batch."""


@dataclasses.dataclass(frozen=True)
class LossOptions:
    """The options of the shared policy-gradient loss, copied into every :class:`LossBatch`."""

    clip_eps: float = 0.2
    """Clipping range of the probability ratio (it matters once the policy moves within an update:
    ``updates_per_rollout > 1`` or several minibatches)."""
    kl_coef: float = 0.0
    """Weight of the KL penalty to the initial policy (0: no penalty and no reference forward pass)."""
    token_aggregation: str = "token_sum"
    """``token_sum``, ``sequence_mean`` or ``token_mean``: see :func:`aggregate`."""

    def __post_init__(self) -> None:
        if self.token_aggregation not in TOKEN_AGGREGATIONS:
            raise ValueError(f"token_aggregation must be one of {TOKEN_AGGREGATIONS}, got {self.token_aggregation!r}.")
        if not self.clip_eps > 0:
            raise ValueError(f"clip_eps must be > 0, got {self.clip_eps}.")
        if self.kl_coef < 0:
            raise ValueError(f"kl_coef must be >= 0, got {self.kl_coef}.")


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What the trainer reads from an algorithm besides :meth:`~Algorithm.advantages` and
    :meth:`~Algorithm.loss`, read once per run (:meth:`Capabilities.of`).

    Each field is the algorithm's attribute of the same name (a class attribute such as
    ``single_agent = True``, or one set in ``__init__``); an algorithm that lacks it gets the default
    written here, so a plain object with the two methods declares nothing and trains as MAGRPO would."""

    single_agent: bool = False
    """True for an algorithm in which one agent does the whole task: the trainer then refuses a
    multi-agent env unless ``policy: shared``."""
    zero_loss_at_zero_advantage: bool = False
    """True when the loss of a reply with advantage 0 is exactly 0 without a KL term: the trainer then
    skips those replies' forward passes (they still count in the weights)."""
    needs_greedy_baseline: bool = False
    """True when :meth:`~Algorithm.advantages` reads ``group.greedy``: the rollout then also samples one
    greedy joint reply per node and steps it (not trained on)."""
    module_updates: int = 1
    """Optimizer steps of the owned modules (``modules_loss``) per inner epoch of an update."""
    minibatch_size: int | None = None
    """Joint samples per optimizer step (``algo_kwargs.minibatch_size``): the rollout is split, in
    rollout order, into ceil(samples / minibatch_size) minibatches, each a loss and an optimizer step
    of its own. ``None``: the whole rollout, one optimizer step per pass."""
    updates_per_rollout: int | None = None
    """Passes (epochs) over the rollout per update (``algo_kwargs.updates_per_rollout``); ``None``:
    the trainer's ``inner_epochs`` (1 unless set)."""
    loss_options: LossOptions = LossOptions()
    """The options of the shared loss, copied into every :class:`LossBatch`; ``kl_coef > 0`` also keeps
    the reference policy."""
    on_step_start: Callable[[int], Any] | None = None
    """Called before the rollout of step ``step`` (1 for the first step)."""
    on_step_end: Callable[[int, Mapping[str, float]], Any] | None = None
    """Called after the update of step ``step`` with the trainer's metrics of the step."""
    pop_metrics: Callable[[], Mapping[str, float]] | None = None
    """The step's logged metrics (``algo/<name>``), called once a step."""
    build_modules: Callable[[Any], Mapping[str, torch.nn.Module]] | None = None
    """Trainable modules the algorithm owns, by name (then ``build_optimizer`` and ``modules_loss`` are
    called too: :class:`AlgorithmBase` documents the three)."""

    def __post_init__(self) -> None:
        for name in ("minibatch_size", "updates_per_rollout"):
            object.__setattr__(self, name, count_option(name, getattr(self, name)))
        if not isinstance(self.loss_options, LossOptions):
            raise TypeError(f"loss_options must be a LossOptions, got {type(self.loss_options).__name__}.")
        for name in _HOOKS:
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise TypeError(f"The algorithm's {name} must be a method, got {getattr(self, name)!r}.")

    @classmethod
    def of(cls, algorithm: Any) -> Capabilities:
        """``algorithm``'s declarations: each field read from its attribute of that name, else the default."""
        return cls(**{f.name: getattr(algorithm, f.name) for f in dataclasses.fields(cls) if hasattr(algorithm, f.name)})


_HOOKS = ("on_step_start", "on_step_end", "pop_metrics", "build_modules")


class AlgorithmBase:
    """An optional base class: the declared :class:`Capabilities` with their defaults, the loss options,
    hooks, owned modules, metrics.

    Subclasses declare what differs as class attributes (``single_agent = True``), take their own
    options as keyword arguments and pass ``**loss_options`` on::

        def __init__(self, my_option: float = 1.0, **loss_options):
            super().__init__(**loss_options)
    """

    single_agent: ClassVar[bool] = Capabilities.single_agent
    zero_loss_at_zero_advantage: ClassVar[bool] = Capabilities.zero_loss_at_zero_advantage
    needs_greedy_baseline: ClassVar[bool] = Capabilities.needs_greedy_baseline
    module_updates: ClassVar[int] = Capabilities.module_updates
    minibatch_size: int | None = Capabilities.minibatch_size
    updates_per_rollout: int | None = Capabilities.updates_per_rollout
    loss_options: LossOptions = Capabilities.loss_options
    """Set from the constructor's ``clip_eps``, ``kl_coef``, ``token_aggregation`` (``algo_kwargs``)."""

    def __init__(self, *, clip_eps: float = 0.2, kl_coef: float = 0.0, token_aggregation: str = "token_sum",
                 minibatch_size: int | None = None, updates_per_rollout: int | None = None) -> None:
        self.loss_options = LossOptions(float(clip_eps), float(kl_coef), str(token_aggregation))
        # an option left unset keeps the class's declared value (a subclass may declare its own default)
        self.minibatch_size = count_option("minibatch_size", self.minibatch_size if minibatch_size is None else minibatch_size)
        self.updates_per_rollout = count_option(
            "updates_per_rollout", self.updates_per_rollout if updates_per_rollout is None else updates_per_rollout)

    @property
    def capabilities(self) -> Capabilities:
        """This algorithm's declarations, as the trainer reads them."""
        return Capabilities.of(self)

    def advantages(self, group: Group) -> np.ndarray:
        raise NotImplementedError

    def loss(self, batch: LossBatch) -> torch.Tensor:
        raise NotImplementedError

    # ------------------------------------------------------------ owned modules
    def build_modules(self, policies: Any) -> dict[str, torch.nn.Module]:
        """Trainable modules this algorithm owns (a value head, a critic), by name; none by default.

        Called once, after the policies are built (``policies``: :class:`trainers.policy.Policies`).
        The trainer moves each module to the policies' device, prepares it and its optimizer
        (:meth:`build_optimizer`) through Accelerate like its own models (DDP across processes),
        steps it with :meth:`modules_loss`, and saves and restores both in checkpoints."""
        return {}

    def build_optimizer(self, name: str, module: torch.nn.Module) -> torch.optim.Optimizer:
        """The optimizer of owned module ``name`` (default: AdamW, learning rate 1e-3)."""
        return torch.optim.AdamW(module.parameters(), lr=1e-3)

    def modules_loss(self, modules: Mapping[str, torch.nn.Module]) -> torch.Tensor | None:
        """The owned modules' loss for this update (one call per inner epoch, after the policies' update).

        ``modules`` are the prepared modules (DDP wrappers with many processes): call them, not the
        ones :meth:`build_modules` returned, so that their gradients are averaged across processes.
        Every process must return a loss that uses every module (or every process ``None``)."""
        return None

    # ------------------------------------------------------------ hooks and metrics
    def on_step_start(self, step: int) -> None:
        """Called before the rollout of step ``step`` (1 for the first step)."""

    def on_step_end(self, step: int, metrics: Mapping[str, float]) -> None:
        """Called after the update of step ``step`` with the trainer's metrics of the step."""

    def log(self, name: str, value: float, agent: str | None = None) -> None:
        """Record a value of metric ``name`` (from any method); the step's mean is logged as ``algo/<name>``.
        With ``agent`` (e.g. ``batch.agent`` in :meth:`loss`), that agent's mean is logged too, as
        ``agent/<agent>/algo/<name>``, beside the mean over every agent."""
        logged = self.__dict__.setdefault("_logged", defaultdict(list))
        logged[f"algo/{name}"].append(float(value))
        if agent is not None:
            logged[f"agent/{agent}/algo/{name}"].append(float(value))

    def pop_metrics(self) -> dict[str, float]:
        """The step's logged metrics (mean of each), then forget them: the trainer calls this once a step."""
        logged = self.__dict__.get("_logged", {})
        metrics = {key: float(np.mean(values)) for key, values in logged.items() if values}
        logged.clear()
        return metrics


def count_option(name: str, value: Any) -> int | None:
    """``value`` as a count >= 1 (a digit string from a command line too), or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a whole number >= 1 (or null for the default), got {value!r}.")
    return int(value)


# ---------------------------------------------------------------------------- advantage shapes
Advantage = float | tuple[float, ...]
"""One reply's advantage: a number, or one per token of the reply."""


def advantage_table(advantages: Any, group: Group) -> list[list[Advantage]]:
    """What ``advantages(group)`` returned, as [S] rows of [N] entries (one per ``group.agents``).

    Accepted: [S] (the same for every agent), [S, N], or per token: [S][N] entries each a number or
    a sequence as long as that reply's ``completion_ids``. Anything else is an error naming the shape."""
    samples, agents = len(group.samples), len(group.agents)
    try:
        table = np.asarray(advantages, dtype=np.float64)
    except (TypeError, ValueError):
        table = None  # ragged: per-token entries of different lengths
    if table is not None and table.ndim == 1:
        table = np.repeat(table[:, None], agents, axis=1)
    if table is not None and table.ndim == 2:
        if table.shape != (samples, agents):
            raise ValueError(f"advantages() returned shape {table.shape}; expected [{samples}] or [{samples}, {agents}].")
        return [[float(value) for value in row] for row in table]
    rows = list(advantages)
    if len(rows) != samples or any(len(row) != agents for row in rows):
        raise ValueError(f"advantages() returned {len(rows)} rows; expected [{samples}], [{samples}, {agents}] or "
                         f"[{samples}][{agents}] per-token entries.")
    return [[_entry(entry, len(sample.replies[agent].completion_ids)) for agent, entry in zip(group.agents, row)]
            for sample, row in zip(group.samples, rows)]


def _entry(entry: Any, tokens: int) -> Advantage:
    value = np.asarray(entry, dtype=np.float64)
    if value.ndim == 0:
        return float(value)
    if value.shape != (tokens,):
        raise ValueError(f"A per-token advantage has shape {value.shape}; its reply has {tokens} tokens.")
    return tuple(float(v) for v in value)


def advantage_tensor(advantages: list[Advantage], width: int, like: torch.Tensor) -> torch.Tensor:
    """[B] when every entry is a number, else [B, width]: per-token rows padded with 0, numbers repeated."""
    if all(isinstance(a, float) for a in advantages):
        return torch.tensor(advantages, dtype=like.dtype, device=like.device)
    rows = torch.zeros(len(advantages), width, dtype=like.dtype, device=like.device)
    for row, advantage in enumerate(advantages):
        if isinstance(advantage, float):
            rows[row] = advantage
        else:
            rows[row, : len(advantage)] = torch.tensor(advantage, dtype=like.dtype)
    return rows


# ---------------------------------------------------------------------------- advantage math
def group_relative(returns: np.ndarray, normalize_std: bool = False, eps: float = 1e-6) -> np.ndarray:
    """A_i = R_i − mean_j R_j over the siblings, optionally divided by their std (GRPO's normalisation)."""
    returns = np.asarray(returns, dtype=np.float64)
    advantages = returns - returns.mean()
    if normalize_std:
        advantages = advantages / (returns.std() + eps)
    return advantages


def leave_one_out(returns: np.ndarray) -> np.ndarray:
    """A_i = R_i − mean_{j≠i} R_j over the S siblings (= S/(S−1) · (R_i − mean R)); works per column of [S, N]."""
    returns = np.asarray(returns, dtype=np.float64)
    count = returns.shape[0]
    if count < 2:
        return np.zeros_like(returns)
    return (returns - returns.mean(axis=0)) * count / (count - 1)


# ---------------------------------------------------------------------------- loss building blocks
def aggregate(per_token: torch.Tensor, batch: LossBatch) -> torch.Tensor:
    """Reduce [B, T] per-token terms to the micro-batch's share of the step's loss.

    "Mean over replies" is the weighted sum with ``batch.weights`` (1 / replies when not given).

    * ``token_sum`` (default): sum over each reply's tokens, mean over replies — the REINFORCE
      estimator of −A·log π(reply), since log π(reply) is the sum of its token log-probs (MAGRPO's
      objective, as the paper and its authors' code write it).
    * ``sequence_mean``: mean over each reply's tokens, then mean over replies — every reply counts the
      same whatever its length (as in GRPO, Shao et al. 2024, Eq. 3).
    * ``token_mean``: mean over all reply tokens of the step — long replies weigh more (DAPO style);
      with weights, a token of reply i weighs w_i · replies / tokens.
    """
    mask = batch.mask
    replies = batch.total_replies or per_token.shape[0]
    weights = batch.weights if batch.weights is not None else torch.full(
        (per_token.shape[0],), 1.0 / replies, dtype=per_token.dtype, device=per_token.device
    )
    if batch.token_aggregation == "sequence_mean":
        per_reply = (per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)
        return (per_reply * weights).sum()
    if batch.token_aggregation == "token_sum":
        return ((per_token * mask).sum(-1) * weights).sum()
    if batch.token_aggregation == "token_mean":
        tokens = batch.total_tokens or float(mask.sum())
        return ((per_token * mask).sum(-1) * weights).sum() * replies / max(tokens, 1.0)
    raise ValueError(f"Unknown token_aggregation {batch.token_aggregation!r}.")


def clipped_surrogate(batch: LossBatch) -> torch.Tensor:
    """Per-token min(ρ·A, clip(ρ, 1±ε)·A) with ρ = π_θ/π_old (PPO; GRPO Eq. 3). With one epoch ρ ≡ 1
    and the gradient is exactly A·∇log π."""
    ratio = torch.exp(batch.logps - batch.old_logps)
    advantages = batch.advantages.unsqueeze(-1) if batch.advantages.dim() == 1 else batch.advantages
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - batch.clip_eps, 1 + batch.clip_eps) * advantages
    return torch.minimum(unclipped, clipped)


def kl_to_reference(batch: LossBatch) -> torch.Tensor:
    """Per-token unbiased KL estimate π_ref/π − log(π_ref/π) − 1 ≥ 0 (GRPO, Shao et al. 2024, Eq. 4)."""
    if batch.ref_logps is None:
        return torch.zeros_like(batch.logps)
    delta = batch.ref_logps - batch.logps
    return torch.exp(delta) - delta - 1


def policy_gradient_loss(batch: LossBatch) -> torch.Tensor:
    """−(clipped surrogate − β·KL), aggregated: the loss MAGRPO, GRPO and MAREINFORCE share. With
    ``importance_weights`` the surrogate of each token is weighted by them (truncated importance
    sampling, as TRL's and MARTI's vLLM correction; the KL term is not)."""
    objective = clipped_surrogate(batch)
    if batch.importance_weights is not None:
        objective = objective * batch.importance_weights
    if batch.kl_coef > 0:
        objective = objective - batch.kl_coef * kl_to_reference(batch)
    return -aggregate(objective, batch)
