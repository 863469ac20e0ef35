"""Greedy evaluation of the agents on held-out problems: final reward, pass rate, tests, cooperation.

The trainer runs it at step 0, every ``eval_every`` steps and after the last step, on the held-out env
of :func:`make_eval_env` (or ``Trainer(eval_env=...)``); never on the training problems.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from trainers.config import TrainConfig
from trainers.generation.base import GenerationBackend, GenerationRequest
from trainers.rollout import JointSample, Node, grow_trees, root_node


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
    records: tuple[dict[str, Any], ...] = ()
    """Per problem: ``task_id``, ``reward``, ``solved``, ``tests_passed``, ``uses_helper`` (None when unknown)."""

    def as_metrics(self, prefix: str = "eval") -> dict[str, float]:
        """``eval/reward``, ``eval/pass_rate`` and, when known, ``eval/tests_passed``, ``eval/coop_rate``."""
        metrics = {f"{prefix}/reward": self.reward, f"{prefix}/pass_rate": self.pass_rate}
        if self.tests_passed is not None:
            metrics[f"{prefix}/tests_passed"] = self.tests_passed
        if self.coop_rate is not None:
            metrics[f"{prefix}/coop_rate"] = self.coop_rate
        return metrics


def evaluate(env: Any, backend: GenerationBackend, cfg: TrainConfig, problems: int) -> EvalResult:
    """Play problems 0..n-1 of ``env`` once each, greedily (temperature 0), all problems batched."""
    roots = []
    for index in range(problems):
        try:
            roots.append(root_node(copy.deepcopy(env), seed=cfg.seed, options={"index": index}))
        except IndexError:
            break  # the split has fewer problems than asked for
    sampler = _greedy_sampler(backend, cfg)
    grow_trees(roots, sampler, group_size=1, joint_mode="aligned", gamma=1.0, max_depth=64)
    records = tuple(_record(root.task_id, _final_sample(root)) for root in roots)
    tests = [r["tests_passed"] for r in records if r["tests_passed"] is not None]
    uses = [r["uses_helper"] for r in records if r["uses_helper"] is not None]
    return EvalResult(
        reward=float(np.mean([r["reward"] for r in records])) if records else 0.0,
        pass_rate=float(np.mean([r["solved"] for r in records])) if records else 0.0,
        problems=len(records),
        task_ids=tuple(root.task_id for root in roots),
        tests_passed=float(np.mean(tests)) if tests and len(tests) == len(records) else None,
        coop_rate=float(np.mean(uses)) if uses and len(uses) == len(records) else None,
        records=records,
    )


def _record(task_id: str, sample: JointSample) -> dict[str, Any]:
    uses = sample.components.get("uses_helper")
    return {
        "task_id": task_id, "reward": sample.reward, "solved": bool(sample.solved),
        "tests_passed": sample.tests_passed,  # infos' details passed/total (the levels reward's ``tests``)
        "uses_helper": None if uses is None else bool(uses > 0),
    }


def _greedy_sampler(backend: GenerationBackend, cfg: TrainConfig):
    def sample(requests: Sequence[tuple[str, str]], n: int):
        settings = {a: dataclasses.replace(cfg.sampling_for(a), temperature=0.0) for a, _ in requests}
        return backend.generate([GenerationRequest(a, obs, n, settings[a]) for a, obs in requests])

    return sample


def _final_sample(node: Node) -> JointSample:
    sample = node.samples[0]
    while sample.child is not None and sample.child.samples:
        sample = sample.child.samples[0]
    return sample


def make_eval_env(cfg: TrainConfig) -> Any:
    """The held-out env: ``eval_env_kwargs``, else the training kwargs with ``split="test"``.

    An env that takes no ``split`` is an error here rather than a silent evaluation on the training
    problems: give ``eval_env_kwargs`` (e.g. a held-out ``data_path``) or ``Trainer(eval_env=...)``."""
    import llm_coop_envs

    if cfg.eval_env_kwargs is not None:
        return llm_coop_envs.make(cfg.env, **dict(cfg.eval_env_kwargs))
    if not llm_coop_envs.spec(cfg.env).accepts("split"):
        raise ValueError(
            f"eval_problems={cfg.eval_problems} but {cfg.env} takes no split, so there are no "
            "held-out problems to evaluate on: set eval_env_kwargs (e.g. a held-out data_path), pass "
            "Trainer(eval_env=...), or set eval_problems=0."
        )
    return llm_coop_envs.make(cfg.env, **{**cfg.env_kwargs, "split": "test"})
