"""One decode step of a Llama model on a CPU in as few operators as its arithmetic needs.

Why: a decode step of SmolLM2-135M (30 layers) with 8 rows takes ~57 ms through transformers'
forward, of which reading the weights is ~33 ms; the rest is Python and small operators repeated in
every layer (keyword-deprecation wrappers, the mask builder, one product per projection, each norm
as six operators, per-row LoRA as six batched products). Here each layer makes one product for q, k
and v and one for gate and up, on weights packed for oneDNN once per generation call
(:mod:`trainers.generation.packed_linear`); each norm is one operator; rotary embeddings turn q and
k in one pass; the query heads that share a key/value head attend as one head's queries; and the
LoRA adapters of all rows ride on the same product: every adapter's A is packed as extra output
columns, each row's columns are masked to its own adapter, and one small product with every
adapter's B finishes them. Measured ~44 ms per step against ~57 ms in one process.

The step is the same arithmetic as transformers' ``LlamaForCausalLM`` forward for one new token per
row (the KV cache written in place through its layers' ``update``), not a new model: it reads the
model's own modules and weights, and is used only where that holds (:meth:`LlamaDecodeStep.supports`):
a plain Llama (no biases, SiLU, no tensor-parallel split), fp32 weights on a CPU without autocast,
projections that are ``nn.Linear`` or plain unmerged peft LoRA on one, transformers and torch inside
this package's declared ranges. Anything else decodes through the model's forward.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from llm_coop_envs.versions import in_tested_range
from trainers.generation.packed_linear import _cpu_autocast, packing_works
from trainers.generation.row_lora import _is_plain_linear_lora

_ATTENTION = ("q_proj", "k_proj", "v_proj")
_MLP = ("gate_proj", "up_proj")


class LlamaDecodeStep:
    """Logits of the next token of every row, given each row's new token; built per generation call
    for the rows' adapters (``None``: the base model) and dropped with it (its packed weights go too)."""

    @classmethod
    def build(cls, model: torch.nn.Module, adapters: Sequence[str | None]) -> LlamaDecodeStep | None:
        """The step for ``model``'s rows with ``adapters``, or None where it does not apply (then the
        model's forward decodes): see :meth:`supports`, and a weight oneDNN refuses to pack."""
        if not cls.supports(model):
            return None
        try:
            return cls(model, adapters)
        except RuntimeError:
            return None

    @staticmethod
    def supports(model: torch.nn.Module) -> bool:
        llama = _llama(model)
        if llama is None or not packing_works() or _cpu_autocast() or not in_tested_range("transformers"):
            return False
        if hasattr(model, "peft_config") and not _plain_lora_only(model):
            return False
        config = llama.config
        if (getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False)
                or config.hidden_act != "silu" or getattr(config, "pretraining_tp", 1) > 1
                or (llama.training and getattr(config, "attention_dropout", 0.0) > 0)
                or any(p.dtype != torch.float32 or p.device.type != "cpu" for p in llama.parameters())):
            return False
        norms = [llama.model.norm] + [
            norm for layer in llama.model.layers for norm in (layer.input_layernorm, layer.post_attention_layernorm)]
        if type(llama.model.embed_tokens) is not torch.nn.Embedding or any(_wrapped(m) for m in norms):
            return False
        projections = [llama.lm_head] + [getattr(layer.self_attn, name) for layer in llama.model.layers
                                         for name in (*_ATTENTION, "o_proj")]
        projections += [getattr(layer.mlp, name) for layer in llama.model.layers for name in (*_MLP, "down_proj")]
        return type(llama.lm_head) is torch.nn.Linear and all(_plain(p) for p in projections)

    def __init__(self, model: torch.nn.Module, adapters: Sequence[str | None]) -> None:
        llama = _llama(model)
        config = llama.config
        self._llama = llama
        self._heads, self._kv_heads = config.num_attention_heads, config.num_key_value_heads
        self._head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self._eps = config.rms_norm_eps
        names = [a for a in dict.fromkeys(adapters) if a is not None]
        self._row_masks: dict[tuple[str, ...], torch.Tensor] = {}
        self._adapters = list(adapters)
        self._layers = [self._pack_layer(layer, names) for layer in llama.model.layers]
        self._head = _pack(llama.lm_head.weight)

    def _pack_layer(self, layer, names: list[str]) -> dict:
        attention, mlp = layer.self_attn, layer.mlp
        qkv = [getattr(attention, n) for n in _ATTENTION]
        gate_up = [getattr(mlp, n) for n in _MLP]
        return {
            "norm_1": layer.input_layernorm.weight, "norm_2": layer.post_attention_layernorm.weight,
            "scaling": attention.scaling,
            "qkv": self._fused(qkv, names), "o": self._fused([attention.o_proj], names),
            "gate_up": self._fused(gate_up, names), "down": self._fused([mlp.down_proj], names),
        }

    def _fused(self, projections: list[torch.nn.Module], names: list[str]):
        """One packed product for ``projections`` (their outputs side by side) followed by the LoRA
        columns ``x @ A`` of every adapter in use, and ``(outputs, B [C, outputs], owners)`` to finish the
        adapters with (``None`` when none of them has one)."""
        weights = [_base(p).weight.detach() for p in projections]
        outputs = sum(w.shape[0] for w in weights)
        columns_a, columns_b, owners = [], [], []
        offset = 0
        for projection, weight in zip(projections, weights):
            for name in names if hasattr(projection, "lora_A") else ():
                if name not in projection.lora_A:
                    continue
                a, b = projection.lora_A[name].weight.detach(), projection.lora_B[name].weight.detach()
                placed = b.new_zeros(outputs, b.shape[1])
                placed[offset : offset + weight.shape[0]] = b * projection.scaling[name]
                columns_a.append(a)
                columns_b.append(placed.T)
                owners += [name] * a.shape[0]
            offset += weight.shape[0]
        if not owners:
            return _pack(torch.cat(weights)), None
        key = tuple(owners)
        if key not in self._row_masks:  # layers with the same columns share one mask
            self._row_masks[key] = torch.tensor([[float(o == adapter) for o in key] for adapter in self._adapters])
        return _pack(torch.cat(weights + columns_a)), (outputs, torch.cat(columns_b).contiguous(), key)

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Keep only ``rows`` (the decode loop dropped the others from its batch and KV cache)."""
        self._row_masks = {owners: mask[rows] for owners, mask in self._row_masks.items()}

    @torch.no_grad()
    def __call__(self, tokens: torch.Tensor, attention_mask: torch.Tensor, positions: torch.Tensor, cache) -> torch.Tensor:
        """``tokens`` [rows, 1], ``attention_mask`` [rows, cached + 1], ``positions`` [rows, 1]; the cache's
        layers take each row's new keys and values. Returns fp32 logits [rows, vocabulary]."""
        rows = tokens.shape[0]
        embedded = self._llama.model.embed_tokens(tokens)
        cos, sin = self._llama.model.rotary_emb(embedded, positions)
        cos, sin = cos[:, :, None], sin[:, :, None]  # [rows, 1, 1, head_dim]: every head of the row
        hidden = embedded[:, 0]
        # additive, built once per step (a boolean mask is turned into this in every layer's attention)
        visible = torch.zeros(attention_mask.shape, dtype=embedded.dtype, device=attention_mask.device)
        visible = visible.masked_fill_(attention_mask == 0, -float("inf"))
        visible = visible[:, None, None, :]
        turned = self._heads + self._kv_heads
        for layer, cache_layer in zip(self._layers, cache.layers):
            qkv = self._product(self._norm(hidden, layer["norm_1"]), layer["qkv"])
            query_key = _rotate(qkv[:, : turned * self._head_dim].view(rows, turned, 1, self._head_dim), cos, sin)
            values = qkv[:, turned * self._head_dim :].view(rows, self._kv_heads, 1, self._head_dim)
            keys, values = cache_layer.update(query_key[:, self._heads :], values)
            # The query heads that share a key/value head attend as that head's queries (one new token
            # each, so no causal order among them): each cached key and value is read once per group.
            grouped = query_key[:, : self._heads].reshape(rows, self._kv_heads, -1, self._head_dim)
            attended = F.scaled_dot_product_attention(grouped, keys, values, attn_mask=visible, scale=layer["scaling"])
            hidden = hidden + self._product(attended.reshape(rows, -1), layer["o"])
            gate_up = self._product(self._norm(hidden, layer["norm_2"]), layer["gate_up"])
            half = gate_up.shape[-1] // 2
            hidden = hidden + self._product(F.silu(gate_up[:, :half]) * gate_up[:, half:], layer["down"])
        return linear_on_packed(self._norm(hidden, self._llama.model.norm.weight), self._head)

    def _product(self, x: torch.Tensor, fused) -> torch.Tensor:
        """The fused projection of ``x`` [rows, in], each row plus its own adapter's LoRA term."""
        packed, lora = fused
        out = linear_on_packed(x, packed)
        if lora is None:
            return out
        outputs, b, owners = lora  # the product's last columns are x @ A of every adapter
        return torch.addmm(out[:, :outputs], out[:, outputs:] * self._row_masks[owners], b)

    def _norm(self, hidden: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(hidden, (hidden.shape[-1],), weight, self._eps)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (transformers' ``rotate_half`` convention) of every head of ``x``."""
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-second, first), dim=-1) * sin


def linear_on_packed(x: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """``x`` times a weight matrix packed in oneDNN's layout (as the step packs its weights), without bias."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")


def _pack(weight: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), None)


def _base(projection: torch.nn.Module) -> torch.nn.Linear:
    return getattr(projection, "base_layer", projection)


def _plain(projection: torch.nn.Module) -> bool:
    """An unsharded ``nn.Linear`` without bias, bare or under plain peft LoRA without a LoRA bias (any
    other wrapper, e.g. IA3 or LoHa, would be skipped by reading its base layer). Dtype and device are
    checked for every parameter in :meth:`LlamaDecodeStep.supports`."""
    if hasattr(projection, "base_layer"):
        if not hasattr(projection, "lora_A") or not _is_plain_linear_lora(projection):
            return False
        if any(b.bias is not None for b in projection.lora_B.values()):
            return False
    base = _base(projection)
    return type(base) is torch.nn.Linear and base.bias is None and type(base.weight.data) is torch.Tensor  # not a DTensor


def _plain_lora_only(model: torch.nn.Module) -> bool:
    """A peft model whose every adapter is plain LoRA: no other tuner (IA3, LoHa, prompt or prefix
    tuning), no whole modules trained beside it (``modules_to_save``, trainable tokens), peft in range."""
    if not in_tested_range("peft"):
        return False
    for config in model.peft_config.values():
        kind = getattr(config, "peft_type", None)
        if getattr(kind, "value", kind) != "LORA" or getattr(config, "modules_to_save", None):
            return False
        if getattr(config, "trainable_token_indices", None):
            return False
    return True


def _wrapped(module: torch.nn.Module) -> bool:
    """A module peft has replaced or wrapped (``modules_to_save`` copies, adapters)."""
    return type(module).__module__.startswith("peft") or hasattr(module, "base_layer")


def _llama(model: torch.nn.Module):
    """The ``LlamaForCausalLM`` inside ``model`` (itself, or under a peft wrapper), else None."""
    from transformers import LlamaForCausalLM

    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner if type(inner) is LlamaForCausalLM else None
