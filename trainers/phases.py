"""Training phases: a run changes its env settings at given steps.

Two uses: a **difficulty schedule** (the procedural suite's ``level`` rises as the agents learn) and
the **dual-phase** training of the work this project follows (self-learning on the env's own test
feedback, then guided learning with an outside reviewer's comments, ``feedback="llm"``). In a config::

    [[phases]]
    from_step = 0
    env_kwargs = { level = 1 }

    [[phases]]
    from_step = 20
    env_kwargs = { level = [1, 2] }

From its ``from_step`` on (0-based: the step about to run) a phase's ``env_kwargs`` are merged over
the run's ``env_kwargs``; before the first phase the run's own settings hold. The env of a step
depends on the step alone, so a resumed run plays the phase it stopped in. Phases change only the
training env: the held-out evaluation keeps its own settings, so the before/after numbers stay
comparable across phases.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any


@dataclasses.dataclass(frozen=True)
class Phase:
    from_step: int
    env_kwargs: Mapping[str, Any]


def parse_phases(phases: Sequence[Mapping[str, Any]]) -> tuple[Phase, ...]:
    """The phases of a config, checked: each ``{from_step, env_kwargs}``, in increasing ``from_step``."""
    parsed = []
    for number, phase in enumerate(phases):
        if not isinstance(phase, Mapping) or set(phase) - {"from_step", "env_kwargs"} or "from_step" not in phase:
            raise ValueError(f"phases[{number}] must be {{from_step = <step>, env_kwargs = {{...}}}}, got {phase!r}.")
        step, kwargs = phase["from_step"], phase.get("env_kwargs", {})
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"phases[{number}].from_step must be an int >= 0, got {step!r}.")
        if not isinstance(kwargs, Mapping):
            raise ValueError(f"phases[{number}].env_kwargs must be a table of env arguments, got {kwargs!r}.")
        parsed.append(Phase(step, dict(kwargs)))
    steps = [phase.from_step for phase in parsed]
    if steps != sorted(set(steps)):
        raise ValueError(f"phases must start at increasing, distinct steps, got from_step {steps}.")
    return tuple(parsed)


def phase_index(phases: Sequence[Phase], step: int) -> int | None:
    """The phase in force at ``step`` (0-based), or None before the first one."""
    started = [i for i, phase in enumerate(phases) if phase.from_step <= step]
    return started[-1] if started else None


def env_kwargs_at(base: Mapping[str, Any], phases: Sequence[Phase], step: int) -> dict[str, Any]:
    """The training env's keyword arguments at ``step``."""
    index = phase_index(phases, step)
    return {**base, **(phases[index].env_kwargs if index is not None else {})}
