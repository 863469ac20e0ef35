"""From a config to an algorithm: ``algo`` and ``algo_kwargs``, built once per run (:func:`build_algorithm`),
and the update schedule its :class:`~trainers.algorithms.base.Capabilities` declare (:func:`update_schedule`).

``clip_eps``, ``kl_coef``, ``token_aggregation``, ``minibatch_size`` and ``updates_per_rollout`` are the
algorithm's options (``algo_kwargs``); the trainer's ``inner_epochs`` stays the default of the last.
"""

from __future__ import annotations

from typing import Any

from trainers.algorithms.base import Capabilities
from trainers.algorithms.registry import get_algorithm


def build_algorithm(cfg: Any) -> Any:
    """``get_algorithm(cfg.algo, **cfg.algo_kwargs)``."""
    return get_algorithm(cfg.algo, **cfg.algo_kwargs)


def update_schedule(capabilities: Capabilities, cfg: Any) -> tuple[int | None, int]:
    """``(minibatch_size, passes)`` of every update: joint samples per optimizer step (``None``: the
    whole rollout) and passes over the rollout (the algorithm's ``updates_per_rollout``, else the
    trainer's ``inner_epochs``)."""
    passes = capabilities.updates_per_rollout
    epochs = getattr(cfg, "inner_epochs", 1)
    if passes is not None and epochs not in (1, passes):
        raise ValueError(f"algo_kwargs.updates_per_rollout={passes} and inner_epochs={epochs} disagree: "
                         "keep algo_kwargs.updates_per_rollout only.")
    return capabilities.minibatch_size, passes or epochs
