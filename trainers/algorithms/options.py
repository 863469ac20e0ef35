"""From a config to an algorithm and its declarations: ``algo`` and ``algo_kwargs``, built once per run
(:func:`build_algorithm`), then read once (:func:`capabilities`).

``clip_eps``, ``kl_coef`` and ``token_aggregation`` are the algorithm's options (``algo_kwargs``).
They used to be trainer settings: the old top-level keys are still accepted, with a
``DeprecationWarning``, and reach the algorithm as if written in ``algo_kwargs``. So are
``minibatch_size`` and ``updates_per_rollout`` (:func:`update_schedule`); the trainer's
``inner_epochs`` stays the default of the latter.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

from trainers.algorithms.base import AlgorithmBase, Capabilities, LossOptions
from trainers.algorithms.registry import algorithm_factory, get_algorithm

LEGACY_KEYS = tuple(field.name for field in dataclasses.fields(LossOptions))


def build_algorithm(cfg: Any) -> Any:
    """``get_algorithm(cfg.algo, **cfg.algo_kwargs)``, with the deprecated top-level loss keys merged in
    for algorithms built on :class:`AlgorithmBase` (others get them through :func:`capabilities`)."""
    kwargs = dict(cfg.algo_kwargs)
    legacy = legacy_loss_options(cfg)
    factory = algorithm_factory(cfg.algo)
    if isinstance(factory, type) and issubclass(factory, AlgorithmBase):
        for key, value in legacy.items():
            if key in kwargs and kwargs[key] != value:
                raise ValueError(f"{key} is set twice, to {value!r} and algo_kwargs.{key}={kwargs[key]!r}: "
                                 f"keep algo_kwargs.{key} only.")
            kwargs.setdefault(key, value)
    return get_algorithm(cfg.algo, **kwargs)


def legacy_loss_options(cfg: Any) -> dict[str, Any]:
    """The deprecated top-level keys that differ from their defaults, with a warning saying where they go."""
    defaults = LossOptions()
    legacy = {key: getattr(cfg, key) for key in LEGACY_KEYS
              if hasattr(cfg, key) and getattr(cfg, key) != getattr(defaults, key)}
    if legacy:
        moved = ", ".join(f"algo_kwargs.{key}={value!r}" for key, value in legacy.items())
        warnings.warn(f"The training key(s) {', '.join(legacy)} are algorithm options now: write {moved} instead "
                      "(the top-level keys will be removed).", DeprecationWarning, stacklevel=3)
    return legacy


def capabilities(algorithm: Any, cfg: Any) -> Capabilities:
    """What the trainer reads from ``algorithm`` (:class:`Capabilities`); a plug-in that declares no
    ``loss_options`` gets the config's (deprecated) top-level keys."""
    defaults = LossOptions()
    config_options = LossOptions(**{key: getattr(cfg, key, getattr(defaults, key)) for key in LEGACY_KEYS})
    return Capabilities.of(algorithm, loss_options=config_options)


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
