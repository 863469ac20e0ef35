"""Train LLM agents on any ``llm_coop_envs`` environment with MAGRPO (or an algorithm you register).

    >>> from trainers import Trainer, load_config
    >>> Trainer(load_config(preset="cpu-demo", overrides=["steps=2"])).train()

Importing this package does not import torch; the heavy modules load on first use.
"""

from __future__ import annotations

from typing import Any

from trainers.config import PRESETS, ConfigError, SamplingConfig, TrainConfig, load_config

__all__ = [
    "PRESETS",
    "ConfigError",
    "SamplingConfig",
    "TrainConfig",
    "Trainer",
    "get_algorithm",
    "load_config",
    "register_algorithm",
    "train",
]


def __getattr__(name: str) -> Any:
    if name == "Trainer":
        from trainers.trainer import Trainer

        return Trainer
    if name in ("register_algorithm", "get_algorithm"):
        from trainers.algorithms import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'trainers' has no attribute {name!r}")


def train(cfg: TrainConfig, **objects: Any) -> list[dict[str, float]]:
    """Build a :class:`Trainer` for ``cfg`` (``env=``, ``models=``, ``algorithm=`` optional) and run it."""
    from trainers.trainer import Trainer

    trainer = Trainer(cfg, **objects)
    try:
        return trainer.train()
    finally:
        trainer.close()
