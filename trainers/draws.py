"""Which training problems a run drew, and how many held-out problems have a twin among them.

A run's training problems are fixed by its settings: problem ``index`` of step ``step`` on process
``rank`` is the env reset with :func:`problem_seed`. So the draws of any run, finished or not, can be
listed again from its config without its records. A held-out problem has a **template twin** among them
when the agents' first observations are equal once every number is masked (``bonus 12`` and
``bonus 30`` are one template): a generated suite with few templates can put the held-out problems'
templates into training, and then a held-out gain is partly a gain on seen templates.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from trainers.phases import env_kwargs_at, parse_phases

NUMBER = re.compile(r"\d+")


def problem_seed(seed: int, step: int, index: int, problems_per_step: int, world_size: int = 1, rank: int = 0) -> int:
    """Seed of the env reset for problem ``index`` of training step ``step`` (0-based) on ``rank``."""
    per_step = problems_per_step * world_size
    return seed * 1_000_003 + step * per_step + rank * problems_per_step + index


def template(observations: Mapping[str, Any]) -> str:
    """The agents' first observations with every number masked, in agent order."""
    return "\n\n".join(NUMBER.sub("#", str(observations[agent])) for agent in sorted(observations))


def training_templates(cfg: Any, world_size: int = 1) -> set[str]:
    """The masked templates of every problem the run of ``cfg`` trains on (``cfg.steps`` steps)."""
    import llm_coop_envs

    phases, envs, found = parse_phases(cfg.phases), {}, set()
    for step in range(cfg.steps):
        kwargs = env_kwargs_at(cfg.env_kwargs, phases, step)
        key = repr(sorted(kwargs.items()))
        if key not in envs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the trainer already warned about a deprecated id
                envs[key] = llm_coop_envs.make(cfg.env, **kwargs)
        for rank in range(world_size):
            for index in range(cfg.problems_per_step):
                seed = problem_seed(cfg.seed, step, index, cfg.problems_per_step, world_size, rank)
                found.add(template(envs[key].reset(seed=seed)[0]))
    return found


def twin_share(held_out_env: Any, indices: Iterable[int], trained: set[str], seed: int = 0) -> tuple[int, int]:
    """``(twins, problems)``: how many held-out problems (reset with ``options={"index": i}``, as the
    evaluation does) have a template among ``trained``."""
    indices = list(indices)
    twins = sum(template(held_out_env.reset(seed=seed, options={"index": i})[0]) in trained for i in indices)
    return twins, len(indices)


def twin_line(twins: int, problems: int, draws: int) -> str:
    """The sentence a report prints under its held-out table."""
    share = 100 * twins / problems if problems else 0.0
    return (f"Held-out problems with a number-masked template twin among the {draws} training draws: "
            f"{twins}/{problems} ({share:.0f} %).")
