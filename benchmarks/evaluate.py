"""Evaluate methods on one env: the Python API behind ``llm-coop eval``.

>>> from benchmarks.evaluate import EvalConfig, Entry, evaluate
>>> from benchmarks.baselines import ScriptedGenerator, get_method
>>> team = {"helper": gen, "main": gen}                      # any ReplyGenerator per role
>>> entries = [Entry(name, get_method(name), team) for name in ("single", "concat")]
>>> results = evaluate(EvalConfig(env="coop_humaneval-v0", n=10), entries)
>>> results["methods"]["concat"]["pass_at_k"]["1"]

Every entry runs the same problems with the same number of samples; ``results`` is JSON-friendly
(config, machine, one summary per entry) and ``results["episodes"]`` holds every episode. Before it
starts, :func:`evaluate` prints what it will cost (episodes, replies, an upper bound on generated
tokens and the time that takes on a CPU) and then shows a progress bar, both on stderr.

The defaults here are the command line's: :class:`EvalConfig`'s field defaults and
:data:`EVAL_SAMPLING` are what ``llm-coop eval`` uses when a flag is not given.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import llm_coop_envs
from benchmarks.annotate import annotate
from benchmarks.baselines.episodes import Team, run_method
from benchmarks.baselines.methods import Method
from benchmarks.machine import machine_info
from benchmarks.metrics.pass_at_k import DEFAULT_KS
from benchmarks.records import EpisodeRecord
from benchmarks.summary import summarize
from trainers.config import SamplingConfig

EVAL_SAMPLING = SamplingConfig(temperature=0.8, top_p=0.95, max_new_tokens=256)
"""Sampling of the models under evaluation unless a team says otherwise (``llm-coop eval``'s defaults)."""
CPU_TOKENS_PER_S = 50
"""Generated tokens per second of SmolLM2-135M on 2 CPU cores (docs/benchmarking.md, "Timing on a CPU"):
the figure behind the time in the cost estimate; larger models are slower, GPUs much faster."""


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """What to evaluate on; the same for every entry."""

    env: str
    """Registered env id."""
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Arguments for ``make`` (e.g. ``{"num_turns": 2}``); a method's own options override them."""
    split: str | None = "test"
    """The split passed to ``make`` unless ``env_kwargs`` names one (held-out problems by default);
    ``None`` passes none (an env without splits)."""
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
        split = {} if self.split is None else {"split": self.split}
        object.__setattr__(self, "env_kwargs", MappingProxyType({**split, **self.env_kwargs}))
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
    progress: bool = True,
) -> dict[str, Any]:
    """Run every entry on the same problems; returns config, machine, per-entry summaries and episodes.

    ``progress``: print the cost estimate and show a progress bar (stderr) over all episodes."""
    _check_labels(entries)
    envs = [llm_coop_envs.make(config.env, **{**config.env_kwargs, **e.method.env_overrides}) for e in entries]
    task_ids = _pick_task_ids(envs[0], config)
    results: dict[str, Any] = {"config": _config_dict(config), "machine": machine_info(), "methods": {}, "episodes": []}
    if progress:
        print(cost_estimate(entries, envs, len(task_ids) * config.n), file=sys.stderr)
    with _progress_bar(len(entries) * len(task_ids) * config.n, progress) as bar:
        def done(record: EpisodeRecord) -> None:
            bar.update(1)
            if on_episode is not None:
                on_episode(record)

        for entry, env in zip(entries, envs):
            jobs = [(task_id, sample) for task_id in task_ids for sample in range(config.n)]
            started = time.perf_counter()
            records = run_method(
                env, entry.method, entry.team, jobs,
                batch_size=config.batch_size, env_workers=config.env_workers, seed=config.seed, on_done=done,
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
    results["config"]["task_ids"] = task_ids
    return results


def cost_estimate(entries: Sequence[Entry], envs: Sequence[Any], episodes_per_entry: int) -> str:
    """One line: episodes, replies, at most how many generated tokens, and the time at :data:`CPU_TOKENS_PER_S`.

    Replies per episode = agents × turns (an upper bound: single-agent methods leave the helper silent,
    solved episodes stop early); tokens = replies × each generator's ``sampling.max_new_tokens``."""
    replies = tokens = 0
    for entry, env in zip(entries, envs):
        turns = getattr(env, "num_turns", 1)
        for agent in env.possible_agents:
            sampling = getattr(entry.team.get(agent), "sampling", None)
            replies += episodes_per_entry * turns
            tokens += episodes_per_entry * turns * (sampling.max_new_tokens if sampling is not None else 0)
    episodes = episodes_per_entry * len(entries)
    head = f"Evaluating {episodes} episodes ({len(entries)} methods × {episodes_per_entry}): up to {replies} replies"
    if not tokens:
        return head + " (no generated tokens: scripted or model-free replies)."
    minutes = tokens / CPU_TOKENS_PER_S / 60
    return (f"{head}, up to {tokens:,} generated tokens ≈ {_duration(minutes)} on a 2-core CPU at "
            f"~{CPU_TOKENS_PER_S} tokens/s (faster on a GPU; the progress bar's ETA is measured).")


def _duration(minutes: float) -> str:
    return f"{minutes:.0f} min" if minutes < 90 else f"{minutes / 60:.1f} h"


class _progress_bar:
    """A tqdm bar over all episodes on stderr, or nothing."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.bar = total, enabled, None

    def __enter__(self):
        if self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="episode", file=sys.stderr)
        return self

    def update(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


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
    if config.problems and not config.task_ids:
        # Only the first N: a generated training split (coop_procedural's) holds a million problems,
        # each built on first use, so listing them all would build them all.
        return [env.task.task_id(i) for i in range(min(config.problems, len(env.task)))]
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
