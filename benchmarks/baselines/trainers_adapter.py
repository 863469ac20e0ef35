"""Reply generators backed by the trainers package: the base model, or a trained checkpoint.

Nothing here generates text itself: it builds the trainers' policies and generation backend
(:func:`trainers.generation.backend_from_config`) and asks it for one completion per prompt.
Needs the ``train`` extra (torch, transformers, peft).
"""

from __future__ import annotations

import dataclasses
import json
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
    from trainers.checkpoint import latest_checkpoint, load_checkpoint
    from trainers.config import load_config

    folder = _checkpoint_folder(Path(checkpoint), latest_checkpoint)
    state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    saved = state.get("config", {})
    fields = {k: v for k, v in saved.items() if k in _config_fields()}
    cfg = load_config(**(fields | config))
    import llm_coop_envs

    from trainers.model_cache import model_record

    agents = tuple(llm_coop_envs.make(cfg.env, **dict(cfg.env_kwargs)).possible_agents)
    described = {"base": model_record(cfg.model), "checkpoint": str(folder), "step": state.get("step")}
    team, policies = _team(agents, cfg, sampling or _eval_sampling(), return_policies=True, model=described)
    for key, tensors in load_checkpoint(folder)["weights"].items():
        policies.load_state_dict(key, tensors)
    return team


def _team(agents, cfg, sampling, return_policies: bool = False, model: Any = None):
    from trainers.generation import backend_from_config
    from trainers.policy import build_policies

    policies = build_policies(tuple(agents), cfg)
    backend = backend_from_config(cfg, policies)
    generator = BackendGenerator(backend, sampling, model if model is not None else cfg.model)
    team = dict.fromkeys(agents, generator)
    return (team, policies) if return_policies else team


def _eval_sampling():
    from benchmarks.evaluate import EVAL_SAMPLING

    return EVAL_SAMPLING


def _checkpoint_folder(path: Path, latest) -> Path:
    if (path / "state.json").is_file():
        return path
    found = latest(path)
    if found is None:
        raise FileNotFoundError(f"No checkpoint in {path}: pass a run folder or its checkpoints/step-N folder.")
    return found


def _config_fields() -> set[str]:
    from trainers.config import TrainConfig

    return {f.name for f in dataclasses.fields(TrainConfig)}
