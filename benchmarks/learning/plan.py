"""The budget every algorithm gets and the trainer command of each (algorithm, seed) run.

Equal budget means equal work per training step for every algorithm, whatever its team:

* the same steps, problems per step and group size G, so the same number of joint samples, i.e.
  of env steps (each runs the program in the sandbox at most once);
* the same cap on generated tokens per joint sample, summed over the agents: the pair's two agents
  get half of it each, a single agent all of it.

Doubling a single agent's G or its steps instead would also equalise the token cap, but it would
double its sandbox calls: only the longer reply keeps both budgets equal.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

# Agents per team; algorithms that train one agent doing the whole task play the "single" team.
TEAM_AGENTS = {"pair": 2, "single": 1}
ALGORITHM_TEAMS = {"grpo": "single"}
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
    temperature: float = 0.8
    top_p: float = 1.0
    model: str = "default"

    def __post_init__(self) -> None:
        for name in ("steps", "problems_per_step", "group_size", "sample_tokens", "eval_every", "eval_problems", "lora_r"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ValueError("--group-size must be at least 2: a group-relative advantage needs siblings")
        if self.sample_tokens % 2:
            raise ValueError(f"--sample-tokens must be even (the pair splits it in two), got {self.sample_tokens}")

    def reply_tokens(self, algo: str) -> int:
        """``max_new_tokens`` of each agent of ``algo``'s team."""
        return self.sample_tokens // TEAM_AGENTS[team(algo)]


@dataclasses.dataclass(frozen=True)
class RunSpec:
    algo: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.algo}-seed{self.seed}"


def team(algo: str) -> str:
    return ALGORITHM_TEAMS.get(algo, "pair")


def plan(algorithms: Sequence[str], seeds: Sequence[int]) -> list[RunSpec]:
    """Seed-major order, so that an interrupted benchmark has every algorithm at the first seeds."""
    return [RunSpec(algo, seed) for seed in seeds for algo in algorithms]


def train_command(spec: RunSpec, env: str, budget: Budget, runs_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    """``llm-coop train`` (as ``python -m trainers train``) for one run; ``extra`` are key=value overrides."""
    team_override = [] if team(spec.algo) == "pair" else [f"env_kwargs.team={team(spec.algo)}"]
    return [
        sys.executable, "-m", "trainers", "train", "--env", env, "--algo", spec.algo, "--model", budget.model,
        "--steps", str(budget.steps), "--run-dir", str(runs_dir), "--run-name", spec.name,
        "--eval-problems", str(budget.eval_problems),
        f"eval_every={budget.eval_every}", f"seed={spec.seed}", f"group_size={budget.group_size}",
        f"problems_per_step={budget.problems_per_step}", f"learning_rate={budget.learning_rate}",
        f"lora_r={budget.lora_r}", f"lora_alpha={2 * budget.lora_r}", f"sampling.temperature={budget.temperature}",
        f"sampling.top_p={budget.top_p}", f"sampling.max_new_tokens={budget.reply_tokens(spec.algo)}",
        "save_every=0", "log_samples=1", "progress_bar=false", "tensorboard=false",
        *team_override, *extra,
    ]
