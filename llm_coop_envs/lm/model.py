"""A small Llama-family transformer the project owns: one forward for training, prefill and decode,
with per-row LoRA adapters built in.

Covers the Llama architecture as transformers' ``LlamaForCausalLM`` computes it (SmolLM2 is one):
RMS norms, rotary position embeddings (plain, or with Llama 3's frequency scaling), grouped-query
attention, a SiLU-gated MLP, tied or separate output embeddings, no biases; and Qwen2 (Qwen2.5), which
adds a bias to q, k and v, without its sliding-window attention. Anything else (other architectures,
biases elsewhere, sliding windows, other rotary variants, other tuners than plain LoRA) is refused by
:func:`llm_coop_envs.lm.load.unsupported` and keeps running through transformers' own forward.

One :meth:`Transformer.forward` serves every use:

* training: a full, left-padded batch with an attention mask; gradients reach the adapters;
* prefill: the same, writing each layer's keys and values into a :class:`KVCache`;
* decode: one new token per row, appended to the cache and attending to all of it.

Rows of one batch may speak for different agents: each linear layer holds a table of LoRA adapters
(any rank each) and the forward takes each row's adapter slot (``-1``: the base model). All the
adapters of a layer sit side by side along the rank axis, so a layer makes one extra pair of small
products whatever the mix of rows, and each row keeps only its own adapter's columns.

:meth:`Transformer.packed` fuses q/k/v and gate/up (and their adapters' A matrices) into one product
each, on weights laid out for oneDNN where torch offers it: a CPU decoding a few rows reads the
weights about twice as fast that way. Inference only: packed weights are detached copies, used by
forwards without grad.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import math
from collections.abc import Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import nn

PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")


@dataclasses.dataclass(frozen=True)
class Shape:
    """The numbers that define a model (read from a transformers ``LlamaConfig`` or ``Qwen2Config``)."""

    vocab: int
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    rms_eps: float
    rope_theta: float
    rope_llama3: tuple[float, float, float, int] | None = None
    """Llama 3's frequency scaling: (factor, low_freq_factor, high_freq_factor, original context)."""
    tied: bool = True
    qkv_bias: bool = False
    """Qwen2's q, k and v projections add a bias; Llama's add none."""

    @classmethod
    def of(cls, config) -> Shape:
        """The shape of a transformers config (4.x keeps rope settings in ``rope_theta``/``rope_scaling``,
        5.x in ``rope_parameters``); a rotary variant other than plain or Llama 3's raises ValueError."""
        rope = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
        theta = rope.get("rope_theta", getattr(config, "rope_theta", None))
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind not in ("default", "llama3") or rope.get("partial_rotary_factor", 1.0) != 1.0:
            raise ValueError(f"rotary embedding {kind!r} is not implemented here")
        llama3 = None
        if kind == "llama3":
            llama3 = (rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"],
                      rope["original_max_position_embeddings"])
        return cls(
            vocab=config.vocab_size, hidden=config.hidden_size, intermediate=config.intermediate_size,
            layers=config.num_hidden_layers, heads=config.num_attention_heads,
            kv_heads=config.num_key_value_heads or config.num_attention_heads,
            head_dim=getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads,
            rms_eps=config.rms_norm_eps, rope_theta=float(theta), rope_llama3=llama3,
            tied=bool(config.tie_word_embeddings), qkv_bias=config.model_type == "qwen2",
        )

    def inverse_frequencies(self) -> torch.Tensor:
        """Rotary frequencies of each pair of a head's channels (Llama 3 slows the low ones down)."""
        steps = torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim
        frequencies = 1.0 / self.rope_theta ** steps
        if self.rope_llama3 is None:
            return frequencies
        factor, low, high, context = self.rope_llama3
        wavelength = 2 * math.pi / frequencies
        slow = torch.where(wavelength > context / low, frequencies / factor, frequencies)
        # between the two wavelengths, a blend of the scaled and the original frequency
        smooth = (context / wavelength - low) / (high - low)
        blended = (1 - smooth) * slow / factor + smooth * slow
        middle = (wavelength >= context / high) & (wavelength <= context / low)
        return torch.where(middle, blended, slow)


class Linear(nn.Module):
    """``x @ W.T`` plus, for each row, its own adapter's LoRA term ``dropout(x) @ A.T @ B.T * scaling``."""

    def __init__(self, weight: nn.Parameter, bias: nn.Parameter | None = None) -> None:
        super().__init__()
        self.weight = weight
        self.bias = bias
        self.lora_a = nn.ParameterList()  # [rank, in] each
        self.lora_b = nn.ParameterList()  # [out, rank] each
        self.slots: list[int] = []
        self.scalings: list[float] = []
        self.dropouts: list[float] = []

    def add_adapter(self, slot: int, a: nn.Parameter, b: nn.Parameter, scaling: float, dropout: float = 0.0) -> None:
        self.lora_a.append(a)
        self.lora_b.append(b)
        self.slots.append(slot)
        self.scalings.append(float(scaling))
        self.dropouts.append(float(dropout))

    def adapter(self, slot: int) -> tuple[nn.Parameter, nn.Parameter] | None:
        """This layer's (A, B) of adapter ``slot``, or None where that adapter does not reach it."""
        if slot not in self.slots:
            return None
        i = self.slots.index(slot)
        return self.lora_a[i], self.lora_b[i]

    def forward(self, x: torch.Tensor, rows: Rows | None) -> torch.Tensor:
        base = F.linear(x, self.weight, self.bias)
        return base if rows is None else _product(x, base, _lora([self]), rows, self.training)


@dataclasses.dataclass
class _Lora:
    """The adapters of one product side by side along the rank axis: column ``j`` of ``x @ a.T`` belongs
    to adapter ``owner[j]`` and is weighed by ``scale[j]`` before ``@ b.T``."""

    a: torch.Tensor  # [columns, in]
    b: torch.Tensor  # [out, columns]
    owner: torch.Tensor  # [columns]
    scale: torch.Tensor  # [columns]
    dropout: torch.Tensor  # [columns]
    layout: tuple
    """Who owns each column at what scaling: products with the same layout share their rows' gates."""


class Rows:
    """Each row's adapter slot (``-1``: none) for one forward, and the gate of every column layout met
    in it: ``gate[row, column]`` is the column's scaling if it belongs to the row's adapter, else 0
    (layers with the same adapters on them share one gate, made once per forward)."""

    def __init__(self, slots: torch.Tensor) -> None:
        self.slots = slots
        self._gates: dict[tuple, torch.Tensor] = {}

    def gate(self, lora: _Lora) -> torch.Tensor:
        if lora.layout not in self._gates:
            self._gates[lora.layout] = torch.where(lora.owner == self.slots[:, None], lora.scale, 0.0)[:, None, :]
        return self._gates[lora.layout]


def _lora(linears: Sequence[Linear]) -> _Lora | None:
    """The adapters of ``linears`` (whose outputs lie side by side) as one :class:`_Lora`, each B
    placed at its own linear's output rows."""
    if not any(linear.lora_a for linear in linears):
        return None
    weight = linears[0].weight
    outputs = [linear.weight.shape[0] for linear in linears]
    a, b, owner, scale, dropout = [], [], [], [], []
    for i, linear in enumerate(linears):
        for lora_a, lora_b, slot, scaling, p in zip(linear.lora_a, linear.lora_b, linear.slots, linear.scalings,
                                                    linear.dropouts):
            a.append(lora_a)
            rank = lora_a.shape[0]
            b.append(F.pad(lora_b, (0, 0, sum(outputs[:i]), sum(outputs[i + 1:]))) if len(linears) > 1 else lora_b)
            owner += [slot] * rank
            scale += [scaling] * rank
            dropout += [p] * rank
    device = weight.device
    return _Lora(torch.cat(a), torch.cat(b, dim=1), torch.tensor(owner, device=device),
                 torch.tensor(scale, dtype=weight.dtype, device=device),
                 torch.tensor(dropout, dtype=weight.dtype, device=device), (tuple(owner), tuple(scale)))


def _product(x: torch.Tensor, base: torch.Tensor, lora: _Lora | None, rows: Rows | None,
             training: bool) -> torch.Tensor:
    """``base`` (the frozen product of ``x`` [rows, tokens, in]) plus each row's adapter term."""
    if lora is None or rows is None:
        return base
    gate = rows.gate(lora)  # each row keeps the columns of its own adapter (at -1, none: the base model)
    if training and bool((lora.dropout > 0).any()):
        # peft's LoRA dropout on the adapter's input, at the rate of each row's own adapter
        rate = torch.where(lora.owner == rows.slots[:, None], lora.dropout, 0.0).amax(-1)[:, None, None]
        x = x * (torch.rand_like(x) >= rate).to(x.dtype) / (1 - rate)
    return base + F.linear(F.linear(x, lora.a) * gate, lora.b)


class KVCache:
    """Every layer's keys and values, ``[rows, kv_heads, positions, head_dim]``.

    With a ``capacity`` the buffers are allocated once and each forward writes its positions in place
    (decoding: no copy of the whole cache per step). Without one the cache grows by concatenation,
    which autograd can follow (a loss that runs a shared prompt once and its replies after it).
    """

    def __init__(self, shape: Shape, rows: int, capacity: int | None = None, *,
                 dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu") -> None:
        size = (rows, shape.kv_heads, capacity or 0, shape.head_dim)
        self.keys = [torch.zeros(size, dtype=dtype, device=device) for _ in range(shape.layers)]
        self.values = [torch.zeros(size, dtype=dtype, device=device) for _ in range(shape.layers)]
        self.capacity = capacity
        self.length = 0

    def update(self, layer: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new positions of ``layer``; its keys and values so far."""
        end = self.length + keys.shape[2]
        if self.capacity is None:
            self.keys[layer] = torch.cat([self.keys[layer], keys], dim=2)
            self.values[layer] = torch.cat([self.values[layer], values], dim=2)
            return self.keys[layer], self.values[layer]
        if end > self.capacity:
            raise RuntimeError(f"KV cache full: {end} positions needed, {self.capacity} allocated")
        self.keys[layer][:, :, self.length:end] = keys
        self.values[layer][:, :, self.length:end] = values
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def select(self, rows: torch.Tensor) -> None:
        """Keep ``rows`` in this order (repeats allowed: a prompt's rows copied to its samples; fewer:
        finished rows dropped)."""
        self.keys = [k.index_select(0, rows) for k in self.keys]
        self.values = [v.index_select(0, rows) for v in self.values]


class Block(nn.Module):
    """One transformer layer: attention then MLP, each on an RMS-normed input, each added back."""

    def __init__(self, shape: Shape, weights: dict[str, nn.Parameter]) -> None:
        super().__init__()
        self.shape = shape
        self.norm_1, self.norm_2 = weights["norm_1"], weights["norm_2"]
        self.proj = nn.ModuleDict({name: Linear(weights[name], weights.get(f"{name}.bias")) for name in PROJECTIONS})
        self.packed: dict[str, tuple] | None = None

    def forward(self, x, cos, sin, mask, cache: KVCache | None, index: int, rows: Rows | None) -> torch.Tensor:
        s = self.shape
        qkv = self._project(("q", "k", "v"), _norm(x, self.norm_1, s.rms_eps), rows)
        x = x + self._project(("o",), self._attend(qkv, cos, sin, mask, cache, index), rows)
        gate, up = self._project(("gate", "up"), _norm(x, self.norm_2, s.rms_eps), rows).chunk(2, dim=-1)
        return x + self._project(("down",), F.silu(gate) * up, rows)

    def _attend(self, qkv, cos, sin, mask, cache: KVCache | None, index: int) -> torch.Tensor:
        """Attention of the new tokens' queries over the cached and new keys: ``[rows, tokens, heads * head_dim]``."""
        s = self.shape
        batch, tokens, _ = qkv.shape
        group = s.heads // s.kv_heads
        if tokens == 1:
            # One new token per row (decoding): the heads sit on the axis attention reads them from as they
            # come out of the product, with no transposes; and the query heads that share a key/value head
            # attend as that head's queries (no causal order among them), so each cached key and value is
            # read once per group instead of once per query head.
            qkv = qkv.view(batch, s.heads + 2 * s.kv_heads, 1, s.head_dim)
            turned = _rotate(qkv[:, : s.heads + s.kv_heads], cos, sin)  # q and k in one pass
            k, v = turned[:, s.heads:], qkv[:, s.heads + s.kv_heads:]
            if cache is not None:
                k, v = cache.update(index, k, v)
            grouped = turned[:, : s.heads].reshape(batch, s.kv_heads, group, s.head_dim)
            return F.scaled_dot_product_attention(grouped, k, v, attn_mask=mask).reshape(batch, 1, -1)
        qkv = qkv.view(batch, tokens, s.heads + 2 * s.kv_heads, s.head_dim)
        turned = _rotate(qkv[:, :, : s.heads + s.kv_heads], cos, sin)
        q, k = turned[:, :, : s.heads].transpose(1, 2), turned[:, :, s.heads:].transpose(1, 2)
        v = qkv[:, :, s.heads + s.kv_heads:].transpose(1, 2)
        if cache is not None:
            k, v = cache.update(index, k, v)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=group > 1)
        return attended.transpose(1, 2).reshape(batch, tokens, -1)

    def _project(self, names: tuple[str, ...], x: torch.Tensor, rows: Rows | None) -> torch.Tensor:
        """The projections ``names`` of ``x``, side by side: one product on packed weights (forwards
        without grad), else one per projection."""
        if self.packed is not None and not torch.is_grad_enabled():
            weight, outputs, lora, b_t = self.packed[names[0]]
            out = _packed_linear(x, weight)
            if lora is None:
                return out
            # the product's last columns are x @ A of every adapter: each row keeps its own and adds them
            # through B, in one fused multiply-add on B laid out for it
            base = out[..., :outputs]
            if rows is None:
                return base
            columns = (out[..., outputs:] * rows.gate(lora)).view(-1, b_t.shape[0])
            return torch.addmm(base.reshape(-1, outputs), columns, b_t).view(base.shape)
        outs = [self.proj[name](x, rows) for name in names]
        return torch.cat(outs, dim=-1) if len(outs) > 1 else outs[0]

    def pack(self) -> None:
        """One product for q/k/v, one for gate/up, one each for o and down, on detached weights; each
        adapter's A rides along as extra output columns (``x @ A.T`` for free with the base product)."""
        self.packed = {}
        for names in (("q", "k", "v"), ("o",), ("gate", "up"), ("down",)):
            linears = [self.proj[name] for name in names]
            with torch.no_grad():
                lora = _lora(linears)
                weights = [linear.weight for linear in linears] + ([lora.a] if lora is not None else [])
                bias = None
                if any(linear.bias is not None for linear in linears):  # Qwen2's q/k/v; zero for A's columns
                    bias = torch.cat([w.new_zeros(len(w)) if linear is None or linear.bias is None else linear.bias
                                      for linear, w in itertools.zip_longest(linears, weights)])
                outputs = sum(linear.weight.shape[0] for linear in linears)
                b_t = None if lora is None else lora.b.detach().T.contiguous()
                self.packed[names[0]] = (_pack(torch.cat(weights), bias), outputs, lora, b_t)


class Transformer(nn.Module):
    """The whole model: embedding, :class:`Block` s, final norm, output head (the embedding when tied).

    Adapters are addressed by slot (``adapter_names[slot]``); a forward's ``adapters`` gives each row's
    slot, ``-1`` (or ``adapters=None`` for every row) for the base model.
    """

    def __init__(self, shape: Shape, weights: dict[str, nn.Parameter]) -> None:
        super().__init__()
        self.shape = shape
        self.embed = weights["embed"]
        self.blocks = nn.ModuleList(
            Block(shape, {key.split(".", 1)[1]: w for key, w in weights.items() if key.startswith(f"{i}.")})
            for i in range(shape.layers))
        self.norm = weights["norm"]
        self.head = None if shape.tied else weights["head"]
        self.register_buffer("frequencies", shape.inverse_frequencies(), persistent=False)
        self.adapter_names: list[str] = []
        self.packed_head: tuple | None = None

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor | None = None, positions: torch.Tensor | None = None,
                cache: KVCache | None = None, adapters: torch.Tensor | Sequence[int] | None = None,
                keep: int | None = None) -> torch.Tensor:
        """Logits ``[rows, keep or tokens, vocab]`` of the last ``keep`` positions of ``tokens`` [rows, tokens].

        ``mask`` [rows, cached + tokens]: 1 where a position holds a token (left padding is 0), over the
        cache's positions and then the new ones; default all ones. ``positions`` [rows, tokens]: each new
        token's rotary position; default counted from ``mask`` (a left-padded row starts at 0).
        ``cache``: keys and values of earlier positions, extended by this forward's. ``adapters``: each
        row's adapter slot."""
        hidden = self.hidden(tokens, mask, positions, cache, adapters)
        return self.logits(hidden if keep is None else hidden[:, -keep:])

    def hidden(self, tokens, mask=None, positions=None, cache=None, adapters=None) -> torch.Tensor:
        """The final normed hidden states ``[rows, tokens, hidden]`` (see :meth:`forward`): for callers
        that need logits at only some positions."""
        batch, count = tokens.shape
        past = cache.length if cache is not None else 0
        if mask is None:
            mask = torch.ones(batch, past + count, dtype=torch.long, device=tokens.device)
        if positions is None:
            positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past:]
        rows = None if adapters is None else Rows(torch.as_tensor(adapters, device=tokens.device))
        cos, sin = self._rotary(positions)
        x = F.embedding(tokens, self.embed)
        attention = _attention_mask(mask.bool(), count, x.dtype)
        for index, block in enumerate(self.blocks):
            x = block(x, cos, sin, attention, cache, index, rows)
        if cache is not None:
            cache.length += count
        return _norm(x, self.norm, self.shape.rms_eps)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.packed_head is not None and not torch.is_grad_enabled():
            return _packed_linear(hidden, self.packed_head)
        return F.linear(hidden, self.embed if self.head is None else self.head)

    def _rotary(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        angles = positions[..., None].float() * self.frequencies
        angles = torch.cat([angles, angles], dim=-1)[:, :, None]  # [rows, tokens, 1 (every head), head_dim]
        return angles.cos().to(self.embed.dtype), angles.sin().to(self.embed.dtype)

    def add_adapter(self, name: str) -> int:
        """A new, empty adapter slot (its layers' A and B come with :meth:`Linear.add_adapter`)."""
        self.adapter_names.append(name)
        return len(self.adapter_names) - 1

    def linears(self) -> Iterator[tuple[int, str, Linear]]:
        for i, block in enumerate(self.blocks):
            for name in PROJECTIONS:
                yield i, name, block.proj[name]

    @contextlib.contextmanager
    def packed(self) -> Iterator[Transformer]:
        """Within the block, forwards without grad run on fused (and, where torch can, oneDNN-packed)
        copies of the weights, made anew on every entry (weights trained in between are picked up) and
        dropped on exit. A forward with grad still runs on the live weights, so gradients are never
        lost to a detached copy."""
        try:
            for block in self.blocks:
                block.pack()
            # the output head is the largest matrix of a small model (SmolLM2-135M: a fifth of its weights)
            self.packed_head = _pack(self.embed if self.head is None else self.head)
            yield self
        finally:
            for block in self.blocks:
                block.packed = None
            self.packed_head = None


def _attention_mask(mask: torch.Tensor, count: int, dtype: torch.dtype) -> torch.Tensor:
    """``[rows, 1, count, positions]``, 0 where a new token sees a position and -inf where not: each new
    token sees the earlier positions that hold tokens, and itself (so a padding position attends to
    something and its values stay finite; no real token ever reads a padding position). Additive, made
    once per forward: a boolean mask would be turned into this in every layer."""
    total = mask.shape[1]
    query = torch.arange(total - count, total, device=mask.device)[:, None]
    key = torch.arange(total, device=mask.device)[None, :]
    seen = ((key <= query) & mask[:, None, :] | (key == query))[:, None]
    return torch.zeros(seen.shape, dtype=dtype, device=mask.device).masked_fill_(~seen, -math.inf)


def _norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding in the "rotate half" layout that transformers' Llama checkpoints are stored in."""
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


@functools.cache
def _onednn() -> bool:
    """Whether this torch packs linear weights for oneDNN and its product of a ``[rows, tokens, in]`` input
    agrees with ``F.linear``."""
    from llm_coop_envs.versions import in_tested_range

    if not in_tested_range("torch") or not torch.backends.mkldnn.is_available():
        return False
    try:
        # Fixed values, not random ones: drawing would shift a seeded run's generator.
        weight, rows = torch.linspace(-1, 1, 32).reshape(8, 4), torch.linspace(1, -2, 12).reshape(3, 1, 4)
        out = torch.ops.mkldnn._linear_pointwise(rows, torch.ops.mkldnn._reorder_linear_weight(weight, None),
                                                 None, "none", [], "")
    except (AttributeError, RuntimeError, NotImplementedError):
        return False
    expected = F.linear(rows, weight)
    return out.shape == expected.shape and torch.allclose(out, expected, atol=1e-5)


def _cpu_autocast() -> bool:
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # torch < 2.4 takes no device
        return torch.is_autocast_cpu_enabled()


def _pack(weight: torch.Tensor, bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None, bool]:
    weight = weight.detach().contiguous()
    # oneDNN's product has no autocast rule: under CPU autocast the plain product (which has one) runs
    if weight.dtype == torch.float32 and weight.device.type == "cpu" and not _cpu_autocast() and _onednn():
        try:
            return torch.ops.mkldnn._reorder_linear_weight(weight, None), bias, True
        except RuntimeError:  # a shape oneDNN refuses: the plain product
            pass
    return weight, bias, False


def _packed_linear(x: torch.Tensor, packed: tuple[torch.Tensor, torch.Tensor | None, bool]) -> torch.Tensor:
    weight, bias, onednn = packed
    if not onednn:
        return F.linear(x, weight, bias)
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")  # [..., in] -> [..., out]
