"""Algorithms: the :class:`Algorithm` protocol, a registry, and the bundled MAGRPO, GRPO, MAREINFORCE."""

from trainers.algorithms.base import (
    Algorithm,
    LossBatch,
    aggregate,
    clipped_surrogate,
    get_algorithm,
    group_relative,
    kl_to_reference,
    policy_gradient_loss,
    register_algorithm,
    registered_algorithms,
)

__all__ = [
    "Algorithm",
    "LossBatch",
    "aggregate",
    "clipped_surrogate",
    "get_algorithm",
    "group_relative",
    "kl_to_reference",
    "policy_gradient_loss",
    "register_algorithm",
    "registered_algorithms",
]
