"""Which training problems a run drew, and how many held-out problems have a twin among them.

A run's training problems are fixed by its settings: problem ``index`` of step ``step`` on process
``rank`` is the env reset with :func:`problem_seed`. So the draws of any run, finished or not, can be
listed again from its config without its records. A held-out problem has a **template twin** among them
when the agents' first observations are equal once every number is masked (``bonus 12`` and
``bonus 30`` are one template): a generated suite with few templates can put the held-out problems'
templates into training, and then a held-out gain is partly a gain on seen templates.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
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


def training_templates(cfg: Any, world_size: int = 1, env_at: Callable[[int], Any] | None = None) -> set[str]:
    """The masked templates of every problem the run of ``cfg`` trains on (``cfg.steps`` steps);
    ``env_at(step)``: the training env of a step (a trainer's own, custom envs included), else the
    registered env ``cfg`` names, with its phases' kwargs."""
    env_at = env_at or _registered_envs(cfg)
    found = set()
    for step in range(cfg.steps):
        for rank in range(world_size):
            for index in range(cfg.problems_per_step):
                seed = problem_seed(cfg.seed, step, index, cfg.problems_per_step, world_size, rank)
                found.add(template(env_at(step).reset(seed=seed)[0]))
    return found


def _registered_envs(cfg: Any) -> Callable[[int], Any]:
    import llm_coop_envs

    phases, envs = parse_phases(cfg.phases), {}

    def env_at(step: int) -> Any:
        kwargs = env_kwargs_at(cfg.env_kwargs, phases, step)
        key = repr(sorted(kwargs.items()))
        if key not in envs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the trainer already warned about a deprecated id
                envs[key] = llm_coop_envs.make(cfg.env, **kwargs)
        return envs[key]

    return env_at


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


def run_twin_line(trainer: Any, problems: int) -> str | None:
    """The sentence for a finished run of ``trainer`` whose evaluation scored ``problems`` held-out
    problems; None when there is no held-out env or the draws cannot be listed again (a custom env)."""
    if trainer.eval_env is None or not problems:
        return None
    try:
        trained = training_templates(trainer.cfg, trainer.dist.world_size, copy_of(trainer.env_at))
        twins, total = twin_share(trainer.eval_env, range(problems), trained, seed=trainer.cfg.seed)
    except Exception:  # noqa: BLE001 -- a line of the report, never a reason to fail a finished run
        return None
    return twin_line(twins, total, trainer.cfg.steps * trainer.cfg.problems_per_step * trainer.dist.world_size)


def copy_of(env_at: Callable[[int], Any]) -> Callable[[int], Any]:
    """Fresh copies of a trainer's envs, so that listing the draws again leaves its own envs as they were."""
    return lambda step: copy.deepcopy(env_at(step))
