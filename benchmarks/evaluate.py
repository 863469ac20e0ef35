"""Evaluate methods on one env: the Python API behind ``llm-coop eval``.

>>> from benchmarks.evaluate import EvalConfig, Entry, evaluate
>>> from benchmarks.baselines import ScriptedGenerator, get_method
>>> team = {"helper": gen, "main": gen}                      # any ReplyGenerator per role
>>> entries = [Entry(name, get_method(name), team) for name in ("single", "concat")]
>>> results = evaluate(EvalConfig(env="coop_humaneval-v0", n=10), entries)
>>> results["methods"]["concat"]["pass_at_k"]["1"]

Every entry runs the same problems with the same number of samples; ``results`` is JSON-friendly
(config, machine, one summary per entry) and ``results["episodes"]`` holds every episode.
"""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import llm_coop_envs
from benchmarks.annotate import annotate
from benchmarks.baselines.episodes import Team, run_method
from benchmarks.baselines.methods import Method
from benchmarks.metrics.pass_at_k import DEFAULT_KS
from benchmarks.records import EpisodeRecord
from benchmarks.summary import summarize


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """What to evaluate on; the same for every entry."""

    env: str
    """Registered env id."""
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Arguments for ``make`` (e.g. ``{"split": "test"}``); a method's own options override them."""
    n: int = 10
    """Samples (joint episodes) per problem."""
    ks: tuple[int, ...] = DEFAULT_KS
    """k values of pass@k / accuracy@k; those above ``n`` are reported as missing."""
    problems: int | None = None
    """Only the first this many problems of the split (None: all)."""
    task_ids: tuple[str, ...] = ()
    """Only these problems (overrides ``problems``)."""
    batch_size: int = 16
    """Episodes advanced in lockstep (one generator call per role per step)."""
    env_workers: int = 4
    """Threads that step env copies (tests run in sandbox processes)."""
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_kwargs", MappingProxyType(dict(self.env_kwargs)))
        object.__setattr__(self, "ks", tuple(sorted(set(self.ks))))
        object.__setattr__(self, "task_ids", tuple(self.task_ids))
        if self.n < 1:
            raise ValueError(f"n (samples per problem) must be >= 1, got {self.n}.")
        if not self.ks or min(self.ks) < 1:
            raise ValueError(f"ks must be positive integers, e.g. (1, 3, 5, 10); got {self.ks}.")
        if self.problems is not None and self.problems < 1:
            raise ValueError(f"problems must be >= 1 or None (all), got {self.problems}.")
        if self.batch_size < 1 or self.env_workers < 1:
            raise ValueError("batch_size and env_workers must be >= 1.")


@dataclasses.dataclass(frozen=True)
class Entry:
    """One row of the results table: a method played by a team of generators."""

    label: str
    method: Method
    team: Team


def evaluate(
    config: EvalConfig,
    entries: Sequence[Entry],
    *,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> dict[str, Any]:
    """Run every entry on the same problems; returns config, machine, per-entry summaries and episodes."""
    _check_labels(entries)
    task_ids: list[str] | None = None
    results: dict[str, Any] = {"config": _config_dict(config), "machine": machine_info(), "methods": {}, "episodes": []}
    for entry in entries:
        env = llm_coop_envs.make(config.env, **{**config.env_kwargs, **entry.method.env_overrides})
        task_ids = task_ids or _pick_task_ids(env, config)
        jobs = [(task_id, sample) for task_id in task_ids for sample in range(config.n)]
        started = time.perf_counter()
        records = run_method(
            env, entry.method, entry.team, jobs,
            batch_size=config.batch_size, env_workers=config.env_workers, seed=config.seed, on_done=on_episode,
        )
        wall_s = time.perf_counter() - started
        for record in records:
            record.method = entry.label
        annotate(env.task, records)
        summary = summarize(records, config.ks, wall_s)
        origin = team_provenance(entry.team, env)
        summary |= {"method": entry.method.name, "description": entry.method.description, "wall_s": wall_s,
                    "provenance": origin}
        results["methods"][entry.label] = summary
        results["episodes"] += [r.to_dict() | {"provenance": origin} for r in records]
    results["config"]["task_ids"] = task_ids or []
    return results


def team_provenance(team: Team, env: Any) -> dict[str, Any]:
    """The provenance record of a team on ``env``: each generator's ``model`` and ``sampling``
    attributes (a generator without a model, e.g. scripted replies, is named by its class)."""
    from trainers.provenance import provenance

    def model_of(generator: Any) -> Any:
        return getattr(generator, "model", None) or {"id": None, "label": f"{type(generator).__name__} (no model)"}

    first = next(iter(team.values()))
    return provenance(
        model=model_of(first), sampling=getattr(first, "sampling", None), env_id=env.spec.id,
        env_kwargs=env.spec.kwargs,
        agent_models={a: model_of(g) for a, g in team.items() if model_of(g) != model_of(first)},
        agent_sampling={a: g.sampling for a, g in team.items()
                        if getattr(g, "sampling", None) != getattr(first, "sampling", None)},
    )


def _pick_task_ids(env: Any, config: EvalConfig) -> list[str]:
    all_ids = [env.task.task_id(i) for i in range(len(env.task))]
    if config.task_ids:
        missing = [t for t in config.task_ids if t not in all_ids]
        if missing:
            raise ValueError(f"Unknown task ids {missing} in this split of {config.env}; e.g. {all_ids[:3]}.")
        return list(config.task_ids)
    return all_ids[: config.problems] if config.problems else all_ids


def _check_labels(entries: Sequence[Entry]) -> None:
    labels = [e.label for e in entries]
    if not entries:
        raise ValueError("Nothing to evaluate: pass at least one entry (method).")
    if len(set(labels)) != len(labels):
        raise ValueError(f"Entry labels must be unique (they name table rows), got {labels}.")


def _config_dict(config: EvalConfig) -> dict[str, Any]:
    data = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    return data | {"env_kwargs": dict(config.env_kwargs), "ks": list(config.ks), "task_ids": list(config.task_ids)}


def machine_info() -> dict[str, Any]:
    """Where the numbers were measured, for the results files."""
    import os

    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
