"""The training configuration: one frozen dataclass, loadable from YAML/TOML, with ``key=value`` overrides.

Every field has a docstring under it (shown by ``llm-coop train --help-config``). A preset is a named
set of overrides on the defaults; a file and then command-line overrides are applied on top:

    >>> cfg = load_config(preset="cpu-demo", overrides=["steps=2", "sampling.temperature=0.7"])

Nested settings (``sampling``, ``agent_sampling.<agent>``, ``env_kwargs``, ``algo_kwargs``) are plain
mappings or small dataclasses, so a file can set them and the command line can reach into them.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

POLICY_MODES = ("lora_per_agent", "separate", "shared")
JOINT_MODES = ("aligned", "cross")
TOKEN_AGGREGATIONS = ("sequence_mean", "token_mean", "token_sum")
DTYPES = ("float32", "bfloat16")
BACKENDS = ("transformers", "vllm")
VLLM_MODES = ("colocate", "server")


@dataclasses.dataclass(frozen=True)
class SamplingConfig:
    """How one agent samples its replies."""

    temperature: float = 1.0
    """Softmax temperature; 0 means greedy decoding (used for evaluation)."""
    top_p: float = 1.0
    """Nucleus sampling mass."""
    max_new_tokens: int = 128
    """Upper bound on the reply length in tokens."""
    stop: tuple[str, ...] = ()
    """Strings that end a reply (the reply is cut before them)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.temperature < 0:
            raise ValueError(f"sampling.temperature must be >= 0, got {self.temperature}.")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"sampling.top_p must be in (0, 1], got {self.top_p}.")
        if self.max_new_tokens < 1:
            raise ValueError(f"sampling.max_new_tokens must be >= 1, got {self.max_new_tokens}.")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs. Build it with :func:`load_config` or directly."""

    # ---------------------------------------------------------------- environment
    env: str = "coop_humaneval-v0"
    """Registered environment id passed to ``llm_coop_envs.make``."""
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for ``make`` (e.g. ``num_turns``, ``split``) for the training env."""
    eval_env_kwargs: Mapping[str, Any] | None = None
    """Keyword arguments for the held-out evaluation env; ``None`` reuses ``env_kwargs`` with ``split="test"``
    when the training env takes a split, else ``env_kwargs`` unchanged."""

    # ---------------------------------------------------------------- algorithm
    algo: str = "magrpo"
    """Registered algorithm name (``magrpo``, ``grpo``, ``mareinforce`` or one you registered)."""
    algo_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for the algorithm's constructor (e.g. ``normalize_std: true``)."""
    group_size: int = 4
    """G: replies sampled per agent per state."""
    joint_mode: str = "aligned"
    """``aligned``: the g-th replies of all agents form a joint sample (G samples); ``cross``: every
    combination (G^N samples)."""
    gamma: float = 0.9
    """Discount: the return of a tree node is its reward plus gamma times the mean return of its children."""
    early_stop_reward: float | None = None
    """Stop expanding a branch once its reward reaches this value (``None``: always expand)."""
    problems_per_step: int = 1
    """States (problems) per training step; each grows its own rollout tree."""
    steps: int = 10
    """Training steps (one optimizer update round per step)."""
    inner_epochs: int = 1
    """Passes over each step's samples; more than one enables the PPO-style clipped ratio."""
    clip_eps: float = 0.2
    """Clipping range of the probability ratio (used when ``inner_epochs > 1``)."""
    kl_coef: float = 0.0
    """Weight of the KL penalty to the initial policy (0 disables it and the reference forward pass)."""
    token_aggregation: str = "token_sum"
    """How token log-probs become a loss: ``token_sum`` (sum per reply = log π(reply), mean over replies:
    MAGRPO's objective), ``sequence_mean`` (mean over each reply, then over replies) or ``token_mean``
    (mean over all tokens of the batch). Why the default: docs/algorithms.md."""
    learning_rate: float = 1e-4
    """AdamW learning rate for every agent."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping per agent (0 disables it)."""
    micro_batch_size: int = 8
    """Replies per forward/backward pass when computing the loss (gradient accumulation beyond it)."""

    # ---------------------------------------------------------------- policies and generation
    model: str = "default"
    """Base model for every agent: ``default`` (SmolLM2-135M-Instruct, pulled on first use), a Hub id or a path."""
    agent_models: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Per-agent model overrides (heterogeneous agents); needs ``policy: separate``."""
    policy: str = "lora_per_agent"
    """``lora_per_agent``: one base model, one LoRA adapter per agent; ``separate``: one model per agent;
    ``shared``: one policy plays every role."""
    lora_r: int = 8
    """LoRA rank; 0 means full fine-tuning (needs ``policy: separate`` or ``shared``)."""
    lora_alpha: int = 16
    """LoRA scaling numerator."""
    lora_dropout: float = 0.0
    """LoRA dropout, active in the loss pass (generation and reference passes run without it)."""
    lora_target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    """Module names that receive LoRA adapters."""
    sampling: SamplingConfig = dataclasses.field(default_factory=SamplingConfig)
    """Default sampling settings for every agent."""
    agent_sampling: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Per-agent overrides of ``sampling`` fields, e.g. ``{helper: {temperature: 0.7}}``."""
    backend: str = "transformers"
    """Generation backend: ``transformers`` (CPU/GPU) or ``vllm`` (GPU, optional extra; LoRA only)."""
    # ---- vLLM generation (backend: vllm; docs/generation.md). Checked by _check_vllm_settings.
    vllm_mode: str = "colocate"
    """``colocate``: a vLLM engine inside the training process, on its GPU; ``server``: a running
    ``vllm serve --enable-lora`` at ``vllm_url``, so generation and training GPUs can differ."""
    vllm_url: str | None = None
    """Base URL of the vLLM server in ``server`` mode, e.g. ``http://gen-node:8000``."""
    vllm_gpu_memory_fraction: float = 0.3
    """Share of the GPU's memory the colocated engine may take (vLLM's ``gpu_memory_utilization``)."""
    vllm_max_loras: int = 2
    """Adapters one vLLM batch may mix (vLLM's ``max_loras``); at least the number of trained adapters."""
    vllm_adapter_dir: str | None = None
    """Folder for the refreshed adapters (``None``: a temporary folder). In ``server`` mode the server
    reads the adapters from this path, so it must see the same folder (same machine or shared disk)."""
    vllm_timeout_s: float = 300.0
    """Seconds to wait for one answer of the vLLM server before failing with a clear error."""
    generation_dtype: str = "float32"
    """Compute dtype for generation: ``bfloat16`` autocast pays off on GPUs and CPUs with native bf16
    (AVX512-BF16/AMX); on AVX2-only CPUs it is ~3x slower than ``float32`` (measured), hence the default."""
    train_dtype: str = "float32"
    """Compute dtype for the loss forward/backward (autocast; weights stay fp32). Same trade-off as
    ``generation_dtype``: use ``bfloat16`` on GPUs."""
    device: str = "auto"
    """``auto`` (CUDA if available, else CPU), ``cpu`` or ``cuda[:i]``."""
    env_workers: int = 8
    """Threads that step the env copies of a group in parallel (the sandbox is thread-safe)."""

    # ---------------------------------------------------------------- run, logging, checkpoints
    seed: int = 0
    """Seeds problem order, sampling and initialisation."""
    run_dir: str = "runs"
    """Parent folder of runs."""
    run_name: str | None = None
    """This run's folder name under ``run_dir``; ``None``: ``<algo>-<date>-<time>``, a fresh folder each run.
    An existing run's folder is never reused silently: see ``resume`` and ``overwrite``."""
    save_every: int = 0
    """Save a checkpoint every N steps (0: only at the end and on Ctrl-C)."""
    keep_checkpoints: int = 2
    """How many recent checkpoints to keep."""
    resume: bool = False
    """Continue from the latest checkpoint in the run folder (``--resume``); logs after it are dropped."""
    overwrite: bool = False
    """Delete an existing run of the same name (its logs, checkpoints, evaluations, final weights) first."""
    log_samples: int = 2
    """Joint samples per step written to ``samples.jsonl`` (transcripts)."""
    tensorboard: bool = True
    """Also write TensorBoard event files."""
    wandb_project: str | None = None
    """Log to Weights & Biases under this project (needs ``wandb``)."""
    progress_bar: bool = True
    """Show a progress bar with the mean reward."""
    eval_problems: int = 0
    """Held-out problems evaluated greedily at step 0, every ``eval_every`` steps and after the last step
    (0: skip). The held-out env is ``Trainer(eval_env=...)``, else ``eval_env_kwargs``, else the training
    env with ``split="test"``; an env without a split and no eval env is an error (never the training problems)."""
    eval_every: int = 0
    """Evaluate every N training steps as well (0: only before the first and after the last step)."""

    def __post_init__(self) -> None:
        _coerce_nested(self)
        _check_choice("joint_mode", self.joint_mode, JOINT_MODES)
        _check_choice("policy", self.policy, POLICY_MODES)
        _check_choice("token_aggregation", self.token_aggregation, TOKEN_AGGREGATIONS)
        _check_choice("generation_dtype", self.generation_dtype, DTYPES)
        _check_choice("train_dtype", self.train_dtype, DTYPES)
        _check_choice("backend", self.backend, BACKENDS)
        _check_vllm_settings(self)
        for name in ("group_size", "problems_per_step", "inner_epochs", "micro_batch_size", "env_workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")
        if self.eval_every < 0 or self.eval_problems < 0:
            raise ValueError("eval_every and eval_problems must be >= 0.")
        if self.resume and self.run_name is None:
            raise ValueError("resume=true needs the run_name of the run to continue.")
        if self.steps < 0:
            raise ValueError(f"steps must be >= 0, got {self.steps}.")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}.")
        if self.lora_r < 0:
            raise ValueError(f"lora_r must be >= 0 (0 = full fine-tuning), got {self.lora_r}.")
        if self.lora_r == 0 and self.policy == "lora_per_agent":
            raise ValueError("Full fine-tuning (lora_r=0) cannot share one base between agents: "
                             "set policy=separate or policy=shared.")
        if self.agent_models and self.policy != "separate":
            raise ValueError("agent_models (heterogeneous agents) needs policy=separate.")
        if self.group_size < 2:
            # A single sample has no siblings: every group-relative advantage would be 0.
            raise ValueError("group_size must be >= 2 so that siblings can be compared.")

    def sampling_for(self, agent: str) -> SamplingConfig:
        """The sampling settings of ``agent``: ``sampling`` with its ``agent_sampling`` overrides."""
        overrides = dict(self.agent_sampling.get(agent, {}))
        return dataclasses.replace(self.sampling, **overrides) if overrides else self.sampling

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(dataclasses.asdict(self), default=_jsonable))


# ---------------------------------------------------------------------------- presets
PRESETS: dict[str, dict[str, Any]] = {
    "cpu-demo": {
        # The MAGRPO seed-0 run of the committed CPU learning benchmark (docs/results.md), on the
        # embedded coop_basics-v0 suite, so the demo needs no download but the model.
        "env": "coop_basics-v0",
        "model": "default",
        "run_name": "cpu-demo",
        "overwrite": True,  # the demo is run again and again: each run replaces the last demo run
        "seed": 0,
        "group_size": 4,
        "problems_per_step": 1,
        "steps": 10,
        "learning_rate": 5e-4,
        "lora_r": 8,
        "lora_alpha": 16,
        "sampling": {"temperature": 0.8, "top_p": 1.0, "max_new_tokens": 128},
        "eval_problems": 43,
        "log_samples": 1,
        "micro_batch_size": 8,
    },
    "paper-coop_humaneval": {
        # The paper's code setting: Qwen2.5-Coder-3B, G=4, two agents (helper + main), one LoRA each.
        "env": "coop_humaneval-v0",
        "model": "Qwen/Qwen2.5-Coder-3B",
        "run_name": "paper-coop_humaneval",
        "group_size": 4,
        "problems_per_step": 8,
        "steps": 1000,
        "learning_rate": 2e-5,
        "gamma": 0.9,
        "sampling": {"temperature": 0.8, "top_p": 0.95, "max_new_tokens": 256},
        "eval_problems": 20,
        "save_every": 50,
    },
    "paper-coop_humaneval-multiturn": {
        "env": "coop_humaneval-v0",
        "env_kwargs": {"num_turns": 2},
        "model": "Qwen/Qwen2.5-Coder-3B",
        "run_name": "paper-coop_humaneval-multiturn",
        "group_size": 4,
        "problems_per_step": 4,
        "steps": 1000,
        "learning_rate": 2e-5,
        "gamma": 0.9,
        "early_stop_reward": 4.0,
        "sampling": {"temperature": 0.8, "top_p": 0.95, "max_new_tokens": 256},
        "save_every": 50,
    },
    "paper-tldr": {
        "env": "tldr-v1",
        "model": "Qwen/Qwen2.5-1.5B",
        "run_name": "paper-tldr",
        "group_size": 4,
        "problems_per_step": 8,
        "steps": 1000,
        "learning_rate": 2e-5,
        "sampling": {"temperature": 0.8, "top_p": 0.95, "max_new_tokens": 256},
        "save_every": 50,
    },
}


def load_config(
    path: str | Path | None = None, *, preset: str | None = None, overrides: Sequence[str] = (), **fields: Any
) -> TrainConfig:
    """Defaults ← preset ← file (YAML ``.yaml/.yml`` or TOML ``.toml``) ← ``fields`` ← ``key=value`` overrides."""
    values: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"Unknown preset {preset!r}; choose one of {sorted(PRESETS)}.")
        _merge(values, PRESETS[preset])
    if path is not None:
        _merge(values, read_config_file(Path(path)))
    _merge(values, fields)
    for item in overrides:
        _merge(values, parse_override(item))
    unknown = set(values) - {f.name for f in dataclasses.fields(TrainConfig)}
    if unknown:
        raise ValueError(f"Unknown config field(s) {sorted(unknown)}; see `llm-coop train --help-config`.")
    return TrainConfig(**values)


def read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"Config file {path} does not exist.")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        import tomllib

        return tomllib.loads(text)
    if path.suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(text) or {}
    raise ValueError(f"Config file {path} must end in .yaml, .yml or .toml.")


def parse_override(item: str) -> dict[str, Any]:
    """``a.b=value`` → ``{"a": {"b": value}}``; the value is parsed as YAML (numbers, lists, null, ...)."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ValueError(f"Override {item!r} must look like key=value (e.g. steps=10 or sampling.top_p=0.9).")
    import yaml

    value = yaml.safe_load(raw) if raw.strip() else ""
    for part in reversed(key.strip().split(".")):
        value = {part: value}
    return value


def describe_fields() -> str:
    """Every field with its default and docstring, for ``--help-config``."""
    docs = _field_docs()
    lines = []
    for f in dataclasses.fields(TrainConfig):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        lines.append(f"{f.name} = {default!r}\n    {docs.get(f.name, '')}")
    lines.append("sampling.<field>: " + ", ".join(f.name for f in dataclasses.fields(SamplingConfig)))
    return "\n".join(lines)


# ---------------------------------------------------------------------------- helpers
def _merge(into: dict[str, Any], update: Mapping[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), Mapping):
            merged = dict(into[key])
            _merge(merged, value)
            into[key] = merged
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value


def _coerce_nested(cfg: TrainConfig) -> None:
    """Files and overrides give plain dicts/lists; turn them into the declared types."""
    if isinstance(cfg.sampling, Mapping):
        object.__setattr__(cfg, "sampling", SamplingConfig(**cfg.sampling))
    for name in ("env_kwargs", "algo_kwargs", "agent_models", "agent_sampling"):
        value = getattr(cfg, name)
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a mapping, got {type(value).__name__}.")
        object.__setattr__(cfg, name, dict(value))
    if isinstance(cfg.lora_target_modules, str):
        object.__setattr__(cfg, "lora_target_modules", (cfg.lora_target_modules,))
    object.__setattr__(cfg, "lora_target_modules", tuple(cfg.lora_target_modules))
    valid = {f.name for f in dataclasses.fields(SamplingConfig)}
    for agent, overrides in cfg.agent_sampling.items():
        bad = set(overrides) - valid
        if bad:
            raise ValueError(f"agent_sampling.{agent} has unknown field(s) {sorted(bad)}; valid: {sorted(valid)}.")


def _check_vllm_settings(cfg: TrainConfig) -> None:
    _check_choice("vllm_mode", cfg.vllm_mode, VLLM_MODES)
    if cfg.vllm_mode == "server" and not cfg.vllm_url:
        raise ValueError("vllm_mode=server needs vllm_url, the address of `vllm serve` (e.g. http://gen-node:8000).")
    if cfg.vllm_url is not None and not str(cfg.vllm_url).startswith(("http://", "https://")):
        raise ValueError(f"vllm_url must start with http:// or https://, got {cfg.vllm_url!r}.")
    if cfg.vllm_url is not None and cfg.vllm_mode != "server":
        raise ValueError("vllm_url is only used with vllm_mode=server; set vllm_mode=server or drop vllm_url.")
    if not 0 < cfg.vllm_gpu_memory_fraction <= 1:
        raise ValueError(f"vllm_gpu_memory_fraction must be in (0, 1], got {cfg.vllm_gpu_memory_fraction}.")
    if cfg.vllm_max_loras < 1:
        raise ValueError(f"vllm_max_loras must be >= 1, got {cfg.vllm_max_loras}.")
    if cfg.vllm_timeout_s <= 0:
        raise ValueError(f"vllm_timeout_s must be > 0, got {cfg.vllm_timeout_s}.")
    if cfg.backend == "vllm" and cfg.lora_r == 0:
        raise ValueError("backend=vllm serves each agent as a LoRA adapter on the shared base; full fine-tuning "
                         "(lora_r=0) needs backend=transformers.")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)


def _field_docs() -> dict[str, str]:
    """Field docstrings, read from this module's source (a string literal right under each field)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(TrainConfig))
    docs: dict[str, str] = {}
    body = tree.body[0].body
    for node, following in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr):
            if isinstance(following.value, ast.Constant) and isinstance(following.value.value, str):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


_ = typing  # typing is kept for readers of the annotations above
