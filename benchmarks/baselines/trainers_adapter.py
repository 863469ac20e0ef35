"""Reply generators backed by the trainers package: the base model, or a trained checkpoint.

Nothing here generates text itself: it builds the trainers' policies and generation backend
(:func:`trainers.generation.backend_from_config`) and asks it for one completion per prompt.
Needs the ``train`` extra (torch, transformers, peft).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.baselines.generator import Reply


class BackendGenerator:
    """A :class:`~benchmarks.baselines.generator.ReplyGenerator` over a trainers generation backend."""

    def __init__(self, backend: Any, sampling: Any, model: Any = None) -> None:
        self.backend = backend
        self.sampling = sampling
        """A ``trainers.config.SamplingConfig`` (temperature 0 = greedy)."""
        self.model = model
        """What the results files record as the model: a name or path, or a checkpoint's description."""

    def __call__(self, prompts: Sequence[str], agent: str) -> list[Reply]:
        from trainers.generation import GenerationRequest

        requests = [GenerationRequest(agent, prompt, 1, self.sampling) for prompt in prompts]
        return [Reply(c[0].text, len(c[0].completion_ids)) for c in self.backend.generate(requests)]


def base_model_team(agents: Sequence[str], *, model: str = "default", sampling: Any = None, **config: Any) -> dict[str, BackendGenerator]:
    """Every agent played by the untrained base model (one shared copy, no adapters); ``sampling``
    defaults to ``benchmarks.evaluate.EVAL_SAMPLING``, as on the command line."""
    from trainers.config import load_config

    cfg = load_config(model=model, policy="shared", lora_r=0, **config)
    return _team(agents, cfg, sampling or _eval_sampling())


def checkpoint_team(checkpoint: str | Path, *, sampling: Any = None, **config: Any) -> dict[str, BackendGenerator]:
    """The agents of a trainer checkpoint folder (``<run>/checkpoints/step-N`` or the run folder: its latest);
    ``sampling`` defaults to ``benchmarks.evaluate.EVAL_SAMPLING``, as on the command line."""
    from trainers.loading import load_policies
    from llm_coop_envs.lm.cache import model_record

    loaded = load_policies(checkpoint, **config)
    described = {"base": model_record(loaded.config.model), "checkpoint": str(loaded.folder), "step": loaded.step}
    return _team(loaded.agents, loaded.config, sampling or _eval_sampling(), loaded.policies, described)


def _team(agents, cfg, sampling, policies: Any = None, model: Any = None) -> dict[str, BackendGenerator]:
    from trainers.generation import backend_from_config
    from trainers.policy import build_policies

    policies = policies if policies is not None else build_policies(tuple(agents), cfg)
    backend = backend_from_config(cfg, policies)
    generator = BackendGenerator(backend, sampling, model if model is not None else cfg.model)
    return dict.fromkeys(agents, generator)


def _eval_sampling():
    from benchmarks.evaluate import EVAL_SAMPLING

    return EVAL_SAMPLING
