"""The budget every algorithm gets and the trainer command of each (algorithm, seed) run.

Equal budget means equal work per training step for every algorithm, whatever its team:

* the same steps, problems per step and group size G, so the same number of joint samples, i.e.
  of env steps (each runs the program in the sandbox at most once);
* the same cap on generated tokens per joint sample, summed over the agents: the pair's two agents
  get half of it each, a single agent all of it.

Doubling a single agent's G or its steps instead would also equalise the token cap, but it would
double its sandbox calls: only the longer reply keeps both budgets equal.

An algorithm is any name ``llm-coop train --algo`` accepts (bundled, registered, installed through the
entry-point group, or ``package.module:Class``), resolved by the same registry; its team is the one
it declares (``single_agent``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Agents per team; algorithms that train one agent doing the whole task play the "single" team.
TEAM_AGENTS = {"pair": 2, "single": 1}
DEFAULT_ALGORITHMS = ("magrpo", "grpo")
DEFAULT_SEEDS = (0, 1)
DEFAULT_ENV = "coop_basics-v0"


@dataclasses.dataclass(frozen=True)
class Budget:
    """What every run gets. ``sample_tokens`` caps the tokens of one joint sample, summed over agents."""

    steps: int = 10
    problems_per_step: int = 1
    group_size: int = 4
    sample_tokens: int = 256
    eval_every: int = 5
    eval_problems: int = 40
    learning_rate: float = 2e-4
    lora_r: int = 8
    temperature: float = 0.6
    top_p: float = 0.6
    model: str = "default"
    stop_after_code: bool = True
    """End each reply at the closing fence of its code block (``sampling.stop_after_code``)."""

    def __post_init__(self) -> None:
        for name in ("steps", "problems_per_step", "group_size", "sample_tokens", "eval_every", "eval_problems", "lora_r"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ValueError("--group-size must be at least 2: a group-relative advantage needs siblings")
        if not 0 < self.learning_rate < float("inf"):
            raise ValueError(f"--learning-rate must be a number > 0, got {self.learning_rate} (e.g. --learning-rate 2e-4)")
        if self.sample_tokens % 2:
            raise ValueError(f"--sample-tokens must be even (the pair splits it in two), got {self.sample_tokens}")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Budget:
        """A budget as recorded in ``bench.json``; one recorded before replies stopped at their closing
        code fence had no such setting, and its runs sampled without that stop."""
        return cls(**{"stop_after_code": False, **values})

    def reply_tokens(self, team_name: str) -> int:
        """``max_new_tokens`` of each agent of a ``pair`` or ``single`` team."""
        return self.sample_tokens // TEAM_AGENTS[team_name]


@dataclasses.dataclass(frozen=True)
class RunSpec:
    algo: str
    seed: int

    @property
    def name(self) -> str:
        return f"{folder_name(self.algo)}-seed{self.seed}"


def folder_name(algo: str) -> str:
    """``algo`` as a file name on every system: ``pkg.module:Class`` becomes ``pkg.module_Class``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", algo)


@functools.lru_cache(maxsize=None)
def team(algo: str) -> str:
    """``single`` when the algorithm declares ``single_agent = True`` (one agent does the whole task),
    else ``pair``. An unknown name or a ``module:Class`` that does not load raises (see
    :func:`check_algorithms`)."""
    from trainers.algorithms.registry import algorithm_factory

    factory = algorithm_factory(algo)  # the trainer's own lookup of --algo
    if isinstance(factory, type):
        missing = [m for m in ("advantages", "loss") if not callable(getattr(factory, m, None))]
        if missing:
            raise TypeError(f"{factory.__qualname__} has no {' or '.join(missing)}() method "
                            "(see trainers.algorithms.base.AlgorithmBase)")
    return "single" if getattr(factory, "single_agent", False) is True else "pair"


def check_algorithms(algorithms: Sequence[str]) -> dict[str, str]:
    """Every algorithm's team, or a one-line ``ValueError`` naming the first that cannot be used."""
    teams = {}
    for algo in algorithms:
        try:
            teams[algo] = team(algo)
        except Exception as error:  # noqa: BLE001 - a user's module may raise anything on import
            raise ValueError(f"--algos {algo}: {one_line(error)}") from error
    if len(set(algorithms)) != len(algorithms):
        raise ValueError(f"--algos names an algorithm twice: {','.join(algorithms)}")
    folders: dict[str, str] = {}
    for algo in algorithms:
        other = folders.setdefault(folder_name(algo), algo)
        if other != algo:
            raise ValueError(f"--algos {other} and {algo} would share the run folders {folder_name(algo)}-seed<k>: "
                             "register one under another name")
    return teams


def teams_of(meta: Mapping[str, Any]) -> dict[str, str]:
    """The team of each algorithm of a benchmark: as recorded in its ``bench.json`` (older ones
    recorded none: then resolved again)."""
    recorded = meta.get("teams") or {}
    return {algo: recorded.get(algo) or team(algo) for algo in meta["algorithms"]}


def one_line(error: Exception) -> str:
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    if not isinstance(error, (KeyError, ImportError, TypeError, ValueError)):  # raised by the user's module itself
        message = f"{type(error).__name__}: {message}"
    if (isinstance(error, ModuleNotFoundError) or isinstance(error.__cause__, ModuleNotFoundError)) and "PYTHONPATH" not in message:
        message += " (is its package installed, or its folder on PYTHONPATH?)"
    return message.splitlines()[0] if message.strip() else type(error).__name__


def plan(algorithms: Sequence[str], seeds: Sequence[int]) -> list[RunSpec]:
    """Seed-major order, so that an interrupted benchmark has every algorithm at the first seeds."""
    return [RunSpec(algo, seed) for seed in seeds for algo in algorithms]


def run_settings(spec: RunSpec, env: str, budget: Budget, extra: Sequence[str] = ()) -> list[str]:
    """The trainer's ``key=value`` settings of one run that the untrained team shares with it (the bench
    evaluates that team from these same settings)."""
    team_name = team(spec.algo)
    team_override = [] if team_name == "pair" else [f"env_kwargs.team={team_name}"]  # the coding envs' one-agent mode
    return [
        f"seed={spec.seed}", f"group_size={budget.group_size}", f"problems_per_step={budget.problems_per_step}",
        f"learning_rate={budget.learning_rate}", f"lora_r={budget.lora_r}", f"lora_alpha={2 * budget.lora_r}",
        f"sampling.temperature={budget.temperature}", f"sampling.top_p={budget.top_p}",
        f"sampling.max_new_tokens={budget.reply_tokens(team_name)}",
        f"sampling.stop_after_code={str(budget.stop_after_code).lower()}",
        *team_override, *extra,
    ]


def train_command(spec: RunSpec, env: str, budget: Budget, runs_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    """``llm-coop train`` (as ``python -m trainers train``) for one run; ``extra`` are key=value overrides.

    The trainer does not evaluate (``eval_problems=0``): it saves a checkpoint every ``eval_every``
    steps and the bench evaluates those (:mod:`benchmarks.learning.evaluation`)."""
    checkpoints = budget.steps // budget.eval_every + 2  # every evaluation point and the last step
    return [
        sys.executable, "-m", "trainers", "train", "--env", env, "--algo", spec.algo, "--model", budget.model,
        "--steps", str(budget.steps), "--run-dir", str(runs_dir), "--run-name", spec.name, "--eval-problems", "0",
        *run_settings(spec, env, budget, extra),
        f"save_every={budget.eval_every}", f"keep_checkpoints={checkpoints}",
        "log_samples=1", "progress_bar=false", "tensorboard=false",
    ]


def eval_command(run_dir: Path, budget: Budget, eval_set: str | None = None,
                 env_kwargs: Mapping[str, Any] | None = None) -> list[str]:
    """The bench's evaluation of every checkpoint of one finished run, on the main held-out set or on
    the extra set ``eval_set`` (whose env kwargs replace the run's ``eval_env_kwargs``)."""
    command = [sys.executable, "-m", "benchmarks.learning.evaluation", "run", str(run_dir),
               "--problems", str(budget.eval_problems)]
    if eval_set is not None:
        command += ["--eval-set", eval_set, "--env-kwargs", json.dumps(dict(env_kwargs or {}), sort_keys=True)]
    return command


def parse_eval_set(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME=KEY:VALUE,...`` or ``NAME={yaml mapping}`` (``--eval-set``): an extra held-out set's name
    and env kwargs, e.g. ``families={split: heldout_families, level: 1}``."""
    import yaml

    name, _, kwargs = text.partition("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not kwargs.strip():
        raise ValueError(f"--eval-set {text!r}: expected NAME={{key: value, ...}} with a name of letters, digits, - or _")
    try:
        value = yaml.safe_load(kwargs)
    except yaml.YAMLError as error:
        raise ValueError(f"--eval-set {name}: its env kwargs are not YAML ({one_line(error)})") from None
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"--eval-set {name}: the env kwargs must be a mapping, e.g. {name}={{split: test}}")
    return name, value


def untrained_command(out: Path, spec: RunSpec, env: str, budget: Budget, extra: Sequence[str] = ()) -> list[str]:
    """The bench's one evaluation of the untrained team that ``spec`` trains (written to ``out``)."""
    return [sys.executable, "-m", "benchmarks.learning.evaluation", "untrained", "--problems", str(budget.eval_problems),
            str(out), *untrained_settings(spec, env, budget, extra)]


def untrained_settings(spec: RunSpec, env: str, budget: Budget, extra: Sequence[str] = ()) -> list[str]:
    """The run's settings as ``key=value`` overrides only (env, algorithm and model included)."""
    return [f"env={env}", f"algo={spec.algo}", f"model={budget.model}", *run_settings(spec, env, budget, extra)]
