"""The baselines of the literature, each as the env options and roles that define it.

Every method runs the same model(s) on the same env through ``make``/``reset``/``step``; they
differ only in how the env is configured and who speaks:

==================  ==========================================================================
``single``          one model writes the whole solution as the last role (``main``); the other
                    roles stay silent (empty replies), one turn. Its prompt is the task's
                    ``single_agent_prompt(index)`` when the task has one, else the last role's.
``concat``          naive concatenation: every role answers its own prompt independently, in
                    parallel, one turn; the env joins the replies (helper code + main code).
``sequential``      sequential pipeline: the first role answers, the next sees its reply, one turn.
``discussion``      one-round discussion: two turns, each agent sees the other's first reply
                    (``share_replies``) and a plain "revise" message, and revises once; the
                    second turn's joint reply is scored even if the first already solved it.
``env``             the agents in the env's own protocol, as registered (plus ``--env-kwargs``):
                    untrained agents, or trained ones when evaluating a checkpoint.
==================  ==========================================================================

A method is a small frozen dataclass; :func:`register_method` adds one (e.g. a new protocol).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


@dataclasses.dataclass(frozen=True)
class Method:
    """How a baseline configures the env and which roles generate."""

    name: str
    description: str
    env_overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for ``make`` that define the method (they override the user's env kwargs)."""
    solo: bool = False
    """Only the last role generates (with the single-agent prompt); the others reply with ''."""

    def __post_init__(self) -> None:
        if not self.name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"A method name is letters, digits, '-' and '_' (it names files), got {self.name!r}.")
        object.__setattr__(self, "env_overrides", MappingProxyType(dict(self.env_overrides)))


_ONE_TURN = {"num_turns": 1}
METHODS: dict[str, Method] = {}


def register_method(method: Method, *, replace: bool = False) -> Method:
    """Make ``method`` available to :func:`benchmarks.evaluate.evaluate` and ``llm-coop eval --methods``."""
    if method.name in METHODS and not replace:
        raise ValueError(f"A method named {method.name!r} exists; pass replace=True to redefine it.")
    METHODS[method.name] = method
    return method


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"Unknown method {name!r}; choose from {sorted(METHODS)} or register_method(...).") from None


register_method(Method("single", "one model writes the whole solution", {**_ONE_TURN, "protocol": "parallel"}, solo=True))
register_method(Method("concat", "agents answer independently, replies joined", {**_ONE_TURN, "protocol": "parallel"}))
register_method(Method("sequential", "helper first, main sees its reply", {**_ONE_TURN, "protocol": "sequential"}))
register_method(
    Method(
        "discussion",
        "each agent sees the other's first reply and revises once",
        {"num_turns": 2, "protocol": "parallel", "share_replies": True, "feedback": "plain", "stop_when_solved": False},
    )
)
register_method(Method("env", "agents in the env's own protocol"))
