"""Greedy evaluation of the agents on held-out problems: mean final reward and pass rate."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

from trainers.config import TrainConfig
from trainers.generation.base import GenerationBackend, GenerationRequest
from trainers.rollout import Node, grow_trees, root_node


@dataclasses.dataclass(frozen=True)
class EvalResult:
    reward: float
    """Mean reward of each episode's final step."""
    pass_rate: float
    """Fraction of episodes whose final step was solved."""
    problems: int
    task_ids: tuple[str, ...]

    def as_metrics(self, prefix: str = "eval") -> dict[str, float]:
        return {f"{prefix}/reward": self.reward, f"{prefix}/pass_rate": self.pass_rate}


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
    finals = [_final_sample(root) for root in roots]
    count = max(len(finals), 1)
    return EvalResult(
        reward=sum(s.reward for s in finals) / count,
        pass_rate=sum(s.solved for s in finals) / count,
        problems=len(finals),
        task_ids=tuple(root.task_id for root in roots),
    )


def _greedy_sampler(backend: GenerationBackend, cfg: TrainConfig):
    def sample(requests: Sequence[tuple[str, str]], n: int):
        settings = {a: dataclasses.replace(cfg.sampling_for(a), temperature=0.0) for a, _ in requests}
        return backend.generate([GenerationRequest(a, obs, n, settings[a]) for a, obs in requests])

    return sample


def _final_sample(node: Node):
    sample = node.samples[0]
    while sample.child is not None and sample.child.samples:
        sample = sample.child.samples[0]
    return sample





def make_eval_env(cfg: TrainConfig) -> Any:
    """The held-out env: ``eval_env_kwargs``, else the training kwargs with ``split="test"`` when the env
    takes a split (the bundled ones do), else the training kwargs."""
    import llm_coop_envs

    if cfg.eval_env_kwargs is not None:
        return llm_coop_envs.make(cfg.env, **dict(cfg.eval_env_kwargs))
    try:
        return llm_coop_envs.make(cfg.env, **{**cfg.env_kwargs, "split": "test"})
    except TypeError:
        return llm_coop_envs.make(cfg.env, **dict(cfg.env_kwargs))
