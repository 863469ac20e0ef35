"""The agents' policies: which model (and which LoRA adapter) speaks for each agent.

Three layouts (``TrainConfig.policy``):

* ``lora_per_agent`` (default): one base model in memory, one peft LoRA adapter per agent. Generation
  batches all agents together with per-row adapters; training activates one adapter at a time.
* ``separate``: one model per agent, possibly different architectures (``agent_models``); LoRA or full.
* ``shared``: one policy (one adapter, or full weights) plays every role.

Weights that are trained are grouped by *key* (an agent name, or ``"shared"``); each key has its own
optimizer. Models stay in ``eval()`` mode (peft only mixes adapters within one batch outside
training mode, and the sampler runs without dropout); only the LoRA dropout modules, when
``lora_dropout > 0``, switch to train mode for the loss pass.

The log-prob math the policies run is in :mod:`trainers.logprobs`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch

from llm_coop_envs.lm.engine import Engine
from llm_coop_envs.lm.load import owned_model
from trainers.config import SamplingConfig, TrainConfig
# pad_token_id is also imported from here (trainers.generation), so it stays a name of this module.
from trainers.logprobs import completion_logprobs, lora_dropout_active, pad_token_id  # noqa: F401

SHARED_KEY = "shared"
_FALLBACK_TEMPLATE_SEPARATOR = "\n"


@dataclasses.dataclass
class AgentSlot:
    """Where one agent's policy lives."""

    model: torch.nn.Module
    tokenizer: Any
    adapter: str | None
    """peft adapter name, or None when the model's own weights are trained (full fine-tuning)."""
    key: str
    """The group of trainable weights this agent updates (shared by every agent of the ``shared`` layout)."""


class Policies:
    """Every agent's slot, plus the operations the trainer needs: prompts, log-probs, state."""

    def __init__(self, slots: Mapping[str, AgentSlot], device: torch.device, train_dtype: str = "float32") -> None:
        self.slots = dict(slots)
        self.agents = tuple(self.slots)
        self.device = device
        self.train_dtype = train_dtype
        self._references: dict[str, torch.nn.Module] = {}
        self.training_modules: dict[str, torch.nn.Module] = {}
        """Per key, the module the loss pass runs through (a DDP wrapper of the slot's model when the
        trainer runs many processes; under FSDP2 the sharded model itself); generation and reference
        passes use the bare (under FSDP2: gathered) model."""
        self._prompt_cache: dict[tuple[int, str], tuple[int, ...]] = {}

    # ----------------------------------------------------------------- structure
    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(slot.key for slot in self.slots.values()))

    def agents_of(self, key: str) -> tuple[str, ...]:
        return tuple(agent for agent, slot in self.slots.items() if slot.key == key)

    def slot_of_key(self, key: str) -> AgentSlot:
        return self.slots[self.agents_of(key)[0]]

    def named_trainable(self, key: str) -> dict[str, torch.nn.Parameter]:
        """The tensors that ``key`` trains, by parameter name (LoRA matrices of its adapter, or all weights)."""
        slot = self.slot_of_key(key)
        if slot.adapter is None:
            return dict(slot.model.named_parameters())
        pattern = re.compile(rf"\.lora_(A|B|embedding_A|embedding_B)\.{re.escape(slot.adapter)}\.")
        return {name: p for name, p in slot.model.named_parameters() if pattern.search(name)}

    def activate(self, agent: str) -> AgentSlot:
        slot = self.slots[agent]
        if slot.adapter is not None:
            slot.model.set_adapter(slot.adapter)  # also makes only this adapter's tensors require grad
        return slot

    # ----------------------------------------------------------------- prompts
    def prompt_ids(self, agent: str, observation: str) -> tuple[int, ...]:
        """The observation as the user turn of the agent's chat template, ready for the reply."""
        tokenizer = self.slots[agent].tokenizer
        cache_key = (id(tokenizer), observation)
        if cache_key not in self._prompt_cache:
            if len(self._prompt_cache) > 4096:
                self._prompt_cache.clear()
            self._prompt_cache[cache_key] = tuple(encode_prompt(tokenizer, observation))
        return self._prompt_cache[cache_key]

    # ----------------------------------------------------------------- log-probs
    def token_logprobs(
        self, agent: str, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]],
        sampling: SamplingConfig | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Log π(token | prefix) for every completion token, with grad: ([B, T], mask [B, T]).

        π is the distribution the replies were sampled from: ``sampling``'s temperature and top-p
        (:mod:`llm_coop_envs.lm.distribution`); ``None`` scores the plain softmax. LoRA dropout, when
        configured, is active during this pass (the rest of the model stays in eval mode)."""
        slot = self.activate(agent)
        model = self.training_modules.get(slot.key, slot.model)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.train_dtype == "bfloat16"):
            owned = owned_model(model) if model is slot.model else None  # a wrapper (DDP, FSDP) keeps its forward
            if owned is not None:
                owned.train()  # each row's LoRA dropout, as peft's
                return Engine(owned).score(prompts, completions, _slots(owned, slot.adapter, len(prompts)),
                                           *_distribution(sampling), pad_id=pad_token_id(slot.tokenizer))
            with lora_dropout_active(slot.model):
                return completion_logprobs(model, slot.tokenizer, prompts, completions, self.device, sampling)

    @torch.no_grad()
    def reference_logprobs(
        self, agent: str, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]],
        sampling: SamplingConfig | None = None,
    ) -> torch.Tensor:
        """Log-probs under the initial policy (adapters disabled, or the frozen copy of full weights)."""
        slot = self.slots[agent]
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.train_dtype == "bfloat16"):
            model = slot.model if slot.adapter is not None else self._references.get(slot.key)
            owned = None if model is None else owned_model(model)
            if owned is not None:  # adapters off: every row on the base (-1)
                return Engine(owned.eval()).score(prompts, completions, [-1] * len(prompts), *_distribution(sampling),
                                           pad_id=pad_token_id(slot.tokenizer))[0]
            if slot.adapter is not None:
                with slot.model.disable_adapter():
                    return completion_logprobs(
                        slot.model, slot.tokenizer, prompts, completions, self.device, sampling
                    )[0]
            reference = self._references.get(slot.key)
            if reference is None:
                raise RuntimeError("No reference model: build the policies with keep_reference=True for a KL penalty.")
            return completion_logprobs(reference, slot.tokenizer, prompts, completions, self.device, sampling)[0]

    def keep_reference(self) -> None:
        """Freeze a copy of fully fine-tuned weights so a KL penalty can compare against them."""
        for key in self.keys:
            slot = self.slot_of_key(key)
            if slot.adapter is None and key not in self._references:
                self._references[key] = copy.deepcopy(slot.model).requires_grad_(False).eval()

    # ----------------------------------------------------------------- state
    def state_dict(self, key: str) -> dict[str, torch.Tensor]:
        """Whole tensors on the CPU; under FSDP every rank must call it (each tensor is gathered)."""
        from trainers.fsdp import full_tensor

        return {name: full_tensor(p.detach()).to("cpu").clone() for name, p in self.named_trainable(key).items()}

    def load_state_dict(self, key: str, state: Mapping[str, torch.Tensor]) -> None:
        params = self.named_trainable(key)
        missing = set(params) - set(state)
        if missing:
            raise ValueError(f"Checkpoint for {key!r} lacks {len(missing)} tensors, e.g. {sorted(missing)[:2]}.")
        with torch.no_grad():
            for name, param in params.items():
                param.copy_(state[name].to(param.device, param.dtype))

    def save_pretrained(self, folder: str, write: bool = True) -> None:
        """Export each key's weights in the standard format (peft adapter folder, or a full model folder).

        Under FSDP every rank must call it (the shards are gathered) and only ``write`` ranks write:
        a sharded model's own ``state_dict()`` holds shards, so it is handed the whole tensors."""
        from pathlib import Path

        from trainers.fsdp import is_sharded

        for key in self.keys:
            slot = self.slot_of_key(key)
            tensors = self.state_dict(key) if is_sharded(slot.model) else None
            if not write:
                continue
            target = Path(folder) / key
            if slot.adapter is not None:
                save_adapter(slot.model, slot.adapter, target, tensors)
            else:
                slot.model.save_pretrained(str(target), state_dict=tensors)
            slot.tokenizer.save_pretrained(str(target))


# ---------------------------------------------------------------------------- saving and prompts
def _slots(owned, adapter: str | None, rows: int) -> list[int]:
    """Every row on ``adapter``'s slot of the owned model (the base model's own weights: -1)."""
    return [-1 if adapter is None else owned.adapter_names.index(adapter)] * rows


def _distribution(sampling: SamplingConfig | None) -> tuple[float, float]:
    """(temperature, top-p) the replies were sampled under; the plain softmax without ``sampling``."""
    return (sampling.temperature, sampling.top_p) if sampling is not None else (1.0, 1.0)


def save_adapter(model: torch.nn.Module, adapter: str, target: Any,
                 state_dict: Mapping[str, torch.Tensor] | None = None) -> None:
    """One peft adapter as a standard adapter folder (``adapter_config.json`` and the weights) at
    ``target``; ``state_dict``: the tensors to write instead of the model's own (gathered shards)."""
    from pathlib import Path

    target = Path(target)
    model.save_pretrained(str(target), selected_adapters=[adapter], state_dict=state_dict)
    nested = target / adapter  # peft puts a non-"default" adapter in a subfolder
    if nested.is_dir():
        for item in nested.iterdir():
            item.replace(target / item.name)
        nested.rmdir()


def encode_prompt(tokenizer: Any, observation: str) -> list[int]:
    """Chat template when the tokenizer has one (the normal case), else the raw text and a newline."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": observation}], tokenize=False, add_generation_prompt=True
        )
    else:
        text = observation + _FALLBACK_TEMPLATE_SEPARATOR
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


# ---------------------------------------------------------------------------- building
ModelPair = tuple[torch.nn.Module, Any]


def build_policies(
    agents: Sequence[str],
    cfg: TrainConfig,
    models: ModelPair | Mapping[str, ModelPair] | None = None,
    device: torch.device | None = None,
    keep_reference: bool = False,
) -> Policies:
    """Load (or take) the models and attach adapters as ``cfg.policy`` says.

    ``models`` lets a caller pass ready models: one ``(model, tokenizer)`` pair for every agent, or a
    mapping agent → pair (``separate`` layout). Otherwise ``cfg.model``/``cfg.agent_models`` are loaded.
    ``keep_reference`` keeps the initial weights for a KL penalty (the algorithm's ``kl_coef > 0``).
    """
    device = device or resolve_device(cfg.device)
    torch.manual_seed(cfg.seed)  # LoRA initialisation is part of the run's seed
    if cfg.policy == "separate":
        slots = {agent: _own_slot(agent, _pair_for(agent, cfg, models, copy_shared=True), cfg, agent) for agent in agents}
    else:
        pair = _pair_for(agents[0], cfg, models, copy_shared=False)
        if cfg.policy == "shared":
            slot = _own_slot(SHARED_KEY, pair, cfg, SHARED_KEY)
            slots = {agent: slot for agent in agents}
        else:
            slots = _lora_per_agent_slots(agents, pair, cfg)
    for slot in {id(s.model): s for s in slots.values()}.values():
        slot.model.to(device).eval()
    policies = Policies(slots, device, cfg.train_dtype)
    if keep_reference:
        policies.keep_reference()
    return policies


def _lora_per_agent_slots(agents: Sequence[str], pair: ModelPair, cfg: TrainConfig) -> dict[str, AgentSlot]:
    from peft import get_peft_model

    model, tokenizer = pair
    names = {agent: adapter_name(agent) for agent in agents}
    with _peft_probe_quiet():
        peft_model = get_peft_model(_frozen(model), lora_config(cfg), adapter_name=names[agents[0]])
    for agent in agents[1:]:
        peft_model.add_adapter(names[agent], lora_config(cfg))
    return {agent: AgentSlot(peft_model, tokenizer, names[agent], agent) for agent in agents}


def _own_slot(name: str, pair: ModelPair, cfg: TrainConfig, key: str) -> AgentSlot:
    model, tokenizer = pair
    if cfg.lora_r == 0:
        model.requires_grad_(True)
        return AgentSlot(model, tokenizer, None, key)
    from peft import get_peft_model

    with _peft_probe_quiet():
        peft_model = get_peft_model(_frozen(model), lora_config(cfg), adapter_name=adapter_name(name))
    return AgentSlot(peft_model, tokenizer, adapter_name(name), key)


@contextlib.contextmanager
def _peft_probe_quiet() -> Iterator[None]:
    """peft probes ``model.is_gradient_checkpointing``, which newer transformers deprecate with a
    FutureWarning in every run; the probe is peft's, not ours, so that one warning is silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.* is deprecated", category=FutureWarning)
        yield


def _frozen(model: torch.nn.Module) -> torch.nn.Module:
    return model.requires_grad_(False)


def lora_config(cfg: TrainConfig):
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=list(cfg.lora_target_modules),
        task_type="CAUSAL_LM",
    )


def adapter_name(agent: str) -> str:
    """peft adapter names may not contain dots; agent names may."""
    return re.sub(r"[^\w-]", "_", agent)


def _pair_for(agent: str, cfg: TrainConfig, models, copy_shared: bool) -> ModelPair:
    if models is None:
        return load_model(cfg.agent_models.get(agent, cfg.model))
    if isinstance(models, Mapping):
        if agent not in models:
            raise KeyError(f"models has no entry for agent {agent!r} (it has {sorted(models)}).")
        return models[agent]
    model, tokenizer = models
    return (copy.deepcopy(model), tokenizer) if copy_shared else (model, tokenizer)


def load_model(name_or_path: str) -> ModelPair:
    """A causal LM in fp32 and its tokenizer (``default`` → the cached SmolLM2, pulled if missing)."""
    from llm_coop_envs.lm.load import pretrained

    model, tokenizer = pretrained(name_or_path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
