"""Trained policies from a checkpoint folder, for code outside the training loop (evaluation, serving).

    loaded = load_policies("runs/cpu-demo")            # the run's latest checkpoint
    loaded.policies, loaded.config, loaded.agents, loaded.step

Needs the ``train`` extra (torch, transformers, peft).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainers.config import TrainConfig


@dataclasses.dataclass(frozen=True)
class LoadedPolicies:
    """What :func:`load_policies` returns: the policies with the trained weights and where they came from."""

    policies: Any
    """A ``trainers.policy.Policies`` holding the checkpoint's trained weights."""
    config: TrainConfig
    """The run's configuration as saved in the checkpoint, with the caller's overrides."""
    agents: tuple[str, ...]
    folder: Path
    """The checkpoint folder itself (``<run>/checkpoints/step-N``)."""
    step: int


def checkpoint_folder(path: str | Path) -> Path:
    """``path`` when it is a checkpoint folder, else the latest checkpoint of the run folder ``path``."""
    from trainers.checkpoint import latest_checkpoint

    path = Path(path)
    if (path / "state.json").is_file():
        return path
    found = latest_checkpoint(path)
    if found is None:
        raise FileNotFoundError(f"No checkpoint in {path}: pass a run folder or its checkpoints/step-N folder.")
    return found


def load_policies(path: str | Path, *, agents: Sequence[str] | None = None, models: Any = None,
                  **overrides: Any) -> LoadedPolicies:
    """Build the policies a checkpoint trained and load its weights.

    ``path`` is a checkpoint folder or a run folder (its latest checkpoint). The configuration is the
    one saved with the checkpoint; ``overrides`` change settings that do not alter the weights (``device``,
    ``backend``, ...). ``agents`` default to the env's agents (the env is made once to read them);
    ``models`` passes ready base models as :func:`trainers.policy.build_policies` takes them."""
    from trainers.checkpoint import load_checkpoint
    from trainers.config import load_config
    from trainers.policy import build_policies

    folder = checkpoint_folder(path)
    checkpoint = load_checkpoint(folder)
    known = {field.name for field in dataclasses.fields(TrainConfig)}
    saved = {k: v for k, v in checkpoint["state"].get("config", {}).items() if k in known}
    cfg = load_config(**(saved | overrides))
    agents = tuple(agents) if agents is not None else _env_agents(cfg)
    policies = build_policies(agents, cfg, models)
    for key, tensors in checkpoint["weights"].items():
        policies.load_state_dict(key, tensors)
    return LoadedPolicies(policies, cfg, agents, folder, checkpoint["step"])


def _env_agents(cfg: TrainConfig) -> tuple[str, ...]:
    import llm_coop_envs

    return tuple(llm_coop_envs.make(cfg.env, **dict(cfg.env_kwargs)).possible_agents)
