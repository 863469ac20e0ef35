"""Algorithms: the :class:`Algorithm` protocol and its optional base class, the registry, and the bundled
MAGRPO, GRPO, MAREINFORCE, MARLOO, MAReMax and the actor-critics MAPPO, IAC and MAAC (docs/algorithms.md)."""

from trainers.algorithms.base import (
    Algorithm,
    AlgorithmBase,
    Capabilities,
    LossBatch,
    LossOptions,
    aggregate,
    clipped_surrogate,
    group_relative,
    kl_to_reference,
    leave_one_out,
    policy_gradient_loss,
)
from trainers.algorithms.registry import (
    ENTRY_POINT_GROUP,
    AlgorithmNameError,
    get_algorithm,
    register_algorithm,
    registered_algorithms,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Algorithm",
    "AlgorithmBase",
    "AlgorithmNameError",
    "Capabilities",
    "LossBatch",
    "LossOptions",
    "aggregate",
    "clipped_surrogate",
    "get_algorithm",
    "group_relative",
    "kl_to_reference",
    "leave_one_out",
    "policy_gradient_loss",
    "register_algorithm",
    "registered_algorithms",
]
