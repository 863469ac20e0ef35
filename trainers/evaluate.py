"""Greedy evaluation of the agents on held-out problems: final reward, pass rate, tests, cooperation.

The trainer runs it at step 0, every ``eval_every`` steps and after the last step, on the held-out env
of :func:`make_eval_env` (or ``Trainer(eval_env=...)``); never on the training problems. The episodes
are played by :func:`play_greedy` (:func:`llm_coop_envs.core.runner.run_episodes` with a greedy policy
over the backend), which the learning bench's evaluation plays too.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from llm_coop_envs.coding.dependence import solved_needing_helper
from llm_coop_envs.core.runner import EpisodeResult, Request, run_episodes
from trainers.config import TrainConfig, explicit_held_out_kwargs
from trainers.generation.base import GenerationBackend, GenerationRequest
from trainers.rollout import tests_share

MAX_EPISODE_STEPS = 64
"""A cap on an evaluation episode's env steps (the rollouts' tree depth cap)."""


@dataclasses.dataclass(frozen=True)
class EvalResult:
    reward: float
    """Mean reward of each episode's final step."""
    pass_rate: float
    """Fraction of episodes whose final step was solved."""
    problems: int
    task_ids: tuple[str, ...]
    tests_passed: float | None = None
    """Mean share of each problem's tests that passed on the final step (None: the env reports no tests)."""
    coop_rate: float | None = None
    """Share of episodes whose final step has a ``uses_helper`` reward component > 0 (None: no such component)."""
    helper_dependent_rate: float | None = None
    """Share of episodes solved with main needing the helper by the counterfactual check (None: the env's
    rules run no such check)."""
    records: tuple[dict[str, Any], ...] = ()
    """Per problem: ``task_id``, ``reward``, ``solved``, ``tests_passed``, ``uses_helper`` (the cooperation level
    was paid), ``helper_needed`` (solved, and main needs the helper: :func:`solved_needing_helper`),
    ``calls_helper`` (main's code really calls the helper, paid or not); None when unknown;
    and ``eval_mode``, how the replies were decoded (``batched`` or ``per_problem``)."""

    def as_metrics(self, prefix: str = "eval") -> dict[str, float]:
        """``eval/reward``, ``eval/pass_rate`` and, when known, ``eval/tests_passed``, ``eval/coop_rate``,
        ``eval/helper_dependent_rate``."""
        metrics = {f"{prefix}/reward": self.reward, f"{prefix}/pass_rate": self.pass_rate}
        if self.tests_passed is not None:
            metrics[f"{prefix}/tests_passed"] = self.tests_passed
        if self.coop_rate is not None:
            metrics[f"{prefix}/coop_rate"] = self.coop_rate
        if self.helper_dependent_rate is not None:
            metrics[f"{prefix}/helper_dependent_rate"] = self.helper_dependent_rate
        return metrics


def evaluate(env: Any, backend: GenerationBackend, cfg: TrainConfig, problems: int,
             progress: bool = False) -> EvalResult:
    """Play problems 0..n-1 of ``env`` once each, greedily (temperature 0): all problems batched, or
    one at a time (``cfg.eval_mode``). ``progress``: a progress bar of the replies' tokens."""
    episodes = play_greedy(env, backend, cfg, problems, seed=cfg.seed, batched=cfg.eval_mode == "batched",
                           progress=progress)
    records = tuple({**_record(episode), "eval_mode": cfg.eval_mode} for episode in episodes)
    tests = [r["tests_passed"] for r in records if r["tests_passed"] is not None]
    uses = [r["uses_helper"] for r in records if r["uses_helper"] is not None]
    needed = [r["helper_needed"] for r in records if r["helper_needed"] is not None]
    return EvalResult(
        reward=float(np.mean([r["reward"] for r in records])) if records else 0.0,
        pass_rate=float(np.mean([r["solved"] for r in records])) if records else 0.0,
        problems=len(records),
        task_ids=tuple(episode.task_id for episode in episodes),
        tests_passed=float(np.mean(tests)) if tests and len(tests) == len(records) else None,
        coop_rate=float(np.mean(uses)) if uses and len(uses) == len(records) else None,
        helper_dependent_rate=float(np.mean(needed)) if needed and len(needed) == len(records) else None,
        records=records,
    )


def play_greedy(env: Any, backend: GenerationBackend, cfg: TrainConfig, problems: int, *, seed: int,
                batched: bool = True, progress: bool = False) -> list[EpisodeResult]:
    """Problems 0..n-1 of ``env`` (fewer when the split has fewer), one greedy episode each (each agent's
    sampling at temperature 0), every episode reset with ``seed``: all problems' generations batched, or
    one problem at a time (``batched=False``). The episode loop of :func:`evaluate` and of the learning
    bench's evaluation, which keep their own records of the episodes."""
    indices = available_problems(env, seed, problems)
    batches = [indices] if batched else [[i] for i in indices]
    episodes: list[EpisodeResult] = []
    with ThreadPoolExecutor(max_workers=8) as pool, _decode_bar(backend, len(indices), progress) as bar:
        for batch in batches:
            episodes += run_episodes([copy.deepcopy(env) for _ in batch], _greedy_policy(backend, cfg, bar),
                                     seeds=[seed] * len(batch), options=[{"index": i} for i in batch],
                                     max_steps=MAX_EPISODE_STEPS, executor=pool)
            bar.problems_done(len(batch))
    return episodes


def available_problems(env: Any, seed: int, problems: int) -> list[int]:
    """Indices 0..problems-1, fewer when the split has fewer problems (its reset says so)."""
    for index in range(problems):
        try:
            copy.deepcopy(env).reset(seed=seed, options={"index": index})
        except IndexError:
            return list(range(index))
    return list(range(problems))


def _record(episode: EpisodeResult) -> dict[str, Any]:
    final = episode.final
    info = final.info if final is not None else {}
    uses = info.get("reward_components", {}).get("uses_helper")
    calls = (info.get("details") or {}).get("helper_use", {}).get("calls_helper")
    return {
        "task_id": episode.task_id, "reward": final.joint_reward if final is not None else 0.0,
        "solved": bool(info.get("solved", False)),
        "tests_passed": tests_share(info),  # infos' details passed/total (the levels reward's ``tests``)
        "uses_helper": None if uses is None else bool(float(uses) > 0),
        "helper_needed": solved_needing_helper(info),
        "calls_helper": None if calls is None else bool(calls),  # main's code really calls it, paid or not
    }


def _greedy_policy(backend: GenerationBackend, cfg: TrainConfig, bar: _DecodeBar):
    """One greedy completion per request, all requests of a step in one ``generate`` call."""
    def answer(requests: Sequence[Request]):
        settings = {r.agent: dataclasses.replace(cfg.sampling_for(r.agent), temperature=0.0) for r in requests}
        bar.new_turn(max(s.max_new_tokens for s in settings.values()))
        completions = backend.generate([GenerationRequest(r.agent, r.observation, 1, settings[r.agent]) for r in requests])
        return [c[0] for c in completions]

    return answer


class _DecodeBar:
    """The evaluation's progress: problems done, and within a turn the tokens decoded so far (from the
    backend's per-step callback, when it has one: ``decode_progress``)."""

    def __init__(self, backend: Any, problems: int, enabled: bool) -> None:
        self.backend, self.bar, self.turn, self.max_tokens = backend, None, 0, 0
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=problems, desc=f"eval {problems} problems", unit="problem", leave=False)
            if hasattr(backend, "decode_progress"):
                backend.decode_progress = self.token

    def new_turn(self, max_tokens: int) -> None:
        self.turn += 1
        self.max_tokens = max_tokens

    def token(self, step: int, running: int) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"turn {self.turn}: token {step + 1}/{self.max_tokens}, {running} replies running")

    def problems_done(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            if hasattr(self.backend, "decode_progress"):
                self.backend.decode_progress = None
            self.bar.close()


@contextlib.contextmanager
def _decode_bar(backend: Any, problems: int, enabled: bool) -> Iterator[_DecodeBar]:
    bar = _DecodeBar(backend, problems, enabled)
    try:
        yield bar
    finally:
        bar.close()


def make_eval_env(cfg: TrainConfig) -> Any:
    """The held-out env: ``eval_env_kwargs`` (with the training team), else the training kwargs with ``split="test"``.

    An env that takes no ``split`` is an error here rather than a silent evaluation on the training
    problems: give ``eval_env_kwargs`` (e.g. a held-out ``data_path``) or ``Trainer(eval_env=...)``."""
    import llm_coop_envs

    if cfg.eval_env_kwargs is not None:
        return llm_coop_envs.make(cfg.env, **explicit_held_out_kwargs(cfg))
    if not llm_coop_envs.spec(cfg.env).accepts("split"):
        raise ValueError(
            f"eval_problems={cfg.eval_problems} but {cfg.env} takes no split, so there are no "
            "held-out problems to evaluate on: set eval_env_kwargs (e.g. a held-out data_path), pass "
            "Trainer(eval_env=...), or set eval_problems=0."
        )
    return llm_coop_envs.make(cfg.env, **{**cfg.env_kwargs, "split": "test"})
