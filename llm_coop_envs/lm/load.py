"""The owned :class:`~llm_coop_envs.lm.model.Transformer` from a transformers Llama (or Qwen2) model, with or
without peft LoRA adapters: transformers and peft only read the checkpoint and keep saving adapters.

:func:`from_transformers` takes each tensor by its name in the transformers model. By default the
owned model holds the very same parameters (no copy: no second set of weights in memory, and an
optimiser, a gradient or peft's ``save_pretrained`` sees one set of adapter weights whichever model
ran). With ``share=False`` it holds copies; :func:`peft_state_dict` then gives an adapter's weights
under peft's names, for ``set_peft_model_state_dict`` or a saved adapter. :func:`owned_model` keeps one owned
model per transformers model for the sampler and the loss, rebuilt only when the model's parameters change.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn

from llm_coop_envs.lm.model import Shape, Transformer

_NAMES = {
    "q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
    "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj",
    "norm_1": "input_layernorm", "norm_2": "post_attention_layernorm",
}
"""Where each of a layer's weights sits in a transformers Llama layer (``model.layers.<i>.``)."""


def unsupported(model: nn.Module) -> str | None:
    """Why ``model`` (a ``LlamaForCausalLM`` or ``Qwen2ForCausalLM``, bare or under peft) cannot run as the owned module, or
    None when it can; a model with a reason runs through transformers' forward."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = getattr(inner, "config", None)
    kind = getattr(config, "model_type", None)
    if (type(inner).__name__, kind) not in (("LlamaForCausalLM", "llama"), ("Qwen2ForCausalLM", "qwen2")):
        return f"{type(inner).__name__} is neither a Llama nor a Qwen2 model"
    if getattr(config, "use_sliding_window", False) or "sliding_attention" in (getattr(config, "layer_types", None) or ()):
        return "sliding-window attention"
    if config.hidden_act != "silu" or getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
        return "biases or an activation other than SiLU"
    if (getattr(config, "pretraining_tp", 1) or 1) > 1:
        return "tensor-parallel weight slicing (pretraining_tp)"
    if getattr(config, "attention_dropout", 0.0) and inner.training:
        return "attention dropout"
    try:
        Shape.of(config)
    except (ValueError, KeyError) as error:
        return str(error)
    for name, peft_config in getattr(model, "peft_config", {}).items():
        kind = getattr(peft_config, "peft_type", None)
        if getattr(kind, "value", kind) != "LORA":
            return f"adapter {name!r} is {kind}, not LoRA"
        if (getattr(peft_config, "use_dora", False) or getattr(peft_config, "bias", "none") != "none"
                or getattr(peft_config, "modules_to_save", None) or getattr(peft_config, "trainable_token_indices", None)):
            return f"adapter {name!r} is not plain LoRA (DoRA, biases, modules_to_save or trainable tokens)"
    projections = {f"{i}.{long}" for i in range(config.num_hidden_layers) for long in _NAMES.values()}
    for module_name, module in inner.named_modules():
        if not hasattr(module, "lora_A"):
            continue
        if module_name.removeprefix("model.layers.") not in projections:
            return f"an adapter on {module_name} (the owned module carries adapters on the seven projections only)"
        if getattr(module, "merged_adapters", None) or getattr(module, "lora_variant", None):
            return f"{module_name} has merged adapters or a LoRA variant"
    return None


def from_transformers(model: nn.Module, share: bool = True) -> Transformer:
    """The owned model of a transformers Llama or Qwen2 model, with every peft LoRA adapter in its table (slot
    order: ``model.peft_config``'s). ``share``: hold ``model``'s own parameters, else copies."""
    reason = unsupported(model)
    if reason is not None:
        raise ValueError(f"not a model the owned module covers: {reason}")
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    tensors = {name.replace(".base_layer", ""): p for name, p in inner.named_parameters(remove_duplicate=False)}

    def take(name: str) -> nn.Parameter:
        tensor = tensors[name]
        return tensor if share else nn.Parameter(tensor.detach().clone(), requires_grad=tensor.requires_grad)

    shape = Shape.of(inner.config)
    weights = {"embed": take("model.embed_tokens.weight"), "norm": take("model.norm.weight")}
    if not shape.tied:
        weights["head"] = take("lm_head.weight")
    for i in range(shape.layers):
        weights.update({f"{i}.{short}": take(f"model.layers.{i}.{long}.weight") for short, long in _NAMES.items()})
        if shape.qkv_bias:
            weights.update({f"{i}.{short}.bias": take(f"model.layers.{i}.{_NAMES[short]}.bias") for short in "qkv"})
    owned = Transformer(shape, weights).to(weights["embed"].device)
    for adapter in getattr(model, "peft_config", {}):
        slot = owned.add_adapter(adapter)
        for i, short, linear in owned.linears():
            path = f"model.layers.{i}.{_NAMES[short]}"
            if f"{path}.lora_A.{adapter}.weight" not in tensors:
                continue  # this adapter does not reach this projection
            layer = inner.get_submodule(path)
            dropout = layer.lora_dropout[adapter]
            linear.add_adapter(slot, take(f"{path}.lora_A.{adapter}.weight"), take(f"{path}.lora_B.{adapter}.weight"),
                               layer.scaling[adapter], getattr(dropout, "p", 0.0))
    return owned


_OWNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def owned_model(model: nn.Module) -> Transformer | None:
    """The owned model that runs ``model`` (sharing its parameters), or None where it cannot
    (:func:`unsupported`). Built on the first call and kept with ``model``; built anew when its set of
    parameters changes (an adapter added, deleted or loaded anew), its adapters' settings or its
    device or dtype. The callers set its mode (``train()``/``eval()``) on every use."""
    if unsupported(model) is not None:
        return None
    key = _identity(model)
    kept = _OWNED.get(model)
    if kept is None or kept[0] != key:
        kept = (key, from_transformers(model))
        _OWNED[model] = kept
    return kept[1]


def _identity(model: nn.Module) -> tuple:
    """What the owned model is built from: each parameter object (parameters updated in place are shared,
    so they need no rebuild), the adapters' settings (rank, scaling, dropout) and where the weights live."""
    parameters = [p for _, p in model.named_parameters(remove_duplicate=False)]
    configs = {name: repr(config) for name, config in getattr(model, "peft_config", {}).items()}
    return tuple(map(id, parameters)), tuple(configs.items()), parameters[0].device, parameters[0].dtype


def peft_state_dict(owned: Transformer, adapter: str) -> dict[str, torch.Tensor]:
    """Adapter ``adapter``'s weights under the names peft saves them with (what
    ``get_peft_model_state_dict`` returns and ``set_peft_model_state_dict`` loads)."""
    slot = owned.adapter_names.index(adapter)
    out = {}
    for i, short, linear in owned.linears():
        pair = linear.adapter(slot)
        if pair is not None:
            path = f"base_model.model.model.layers.{i}.{_NAMES[short]}"
            out[f"{path}.lora_A.weight"], out[f"{path}.lora_B.weight"] = (t.detach().clone() for t in pair)
    return out


def pretrained(name_or_path: str, *, pull: bool = True):
    """``(model, tokenizer)`` of a checkpoint in fp32, as transformers reads it: ``default`` (and its
    aliases) is the cached default model, pulled when missing unless ``pull`` is false
    (:func:`llm_coop_envs.lm.cache.resolve_model`). The one place the project loads a model."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from llm_coop_envs.lm.cache import resolve_model

    path = resolve_model(name_or_path, pull=pull)
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32), AutoTokenizer.from_pretrained(path)
