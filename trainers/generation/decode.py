"""A small sampling loop over a causal LM with the KV cache: prefill each distinct prompt once.

Why not ``model.generate``: in a group of G samples every row shares its prompt, and on a CPU the
prompt pass (~300 chat-template tokens) of G rows costs as much as ~40 decode steps. Here each
distinct (adapter, prompt) pair is prefilled once, its cache rows are copied to its samples, and the
decode steps run all rows (all agents) together, writing into a KV cache allocated once
(:mod:`trainers.generation.kv_cache`); rows that finish leave the batch. Sampling matches ``generate``'s: temperature,
then nucleus (``top_p``) filtering, then a draw from the softmax; greedy when temperature is 0
(:mod:`llm_coop_envs.lm.distribution`, which the loss scores with too). A row ends at any
end-of-sequence token (``eos_ids``: every end token of the model), a stop string, the closing fence of
its code block (``stop_after_code``), or ``max_new_tokens``.
Each chosen token's log-probability under the sampling distribution is returned with it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from trainers.generation.base import code_block_end
from llm_coop_envs.cache_api import cache_of, passing
from llm_coop_envs.lm.engine import PREFILL_TOKENS, length_chunks, pick, worth_compacting
from trainers.generation.kv_cache import RowCache


@dataclasses.dataclass(frozen=True)
class DecodeSettings:
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    eos_ids: frozenset[int] = frozenset()
    pad_id: int = 0
    stop: tuple[str, ...] = ()
    stop_after_code: bool = False
    """End a row once its text has an opening code fence and then a closing one."""
    min_new_tokens: int = 0
    """End-of-sequence is forbidden before this many tokens (benchmarks use it to fix the work)."""


class FastStep(Protocol):
    """A decode step that replaces the model's forward (:class:`trainers.generation.llama_step.LlamaDecodeStep`)."""

    def __call__(self, tokens: torch.Tensor, attention_mask: torch.Tensor, positions: torch.Tensor,
                 cache: RowCache) -> torch.Tensor: ...

    def keep_rows(self, rows: torch.Tensor) -> None: ...


AdapterScope = Callable[[Sequence[int]], contextlib.AbstractContextManager]
"""Given, for each row of the next forwards, the index of its prompt, a context that routes each row
to its agent's adapter (a no-op for a model without adapters)."""


@torch.no_grad()
def decode(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    prompt_of_row: Sequence[int],
    settings: DecodeSettings,
    adapter_scope: AdapterScope,
    decode_text: Callable[[list[int]], str] | None = None,
    compact: bool = True,
    progress: Callable[[int, int], None] | None = None,
    fast_step: FastStep | None = None,
) -> tuple[list[list[int]], list[list[float]]]:
    """New tokens for each row (row ``i`` continues ``prompts[prompt_of_row[i]]``), without padding,
    and each token's log-probability under the sampling distribution.

    With ``compact`` (the default), rows that have finished leave the batch (the KV cache keeps only the
    running rows); without it they keep decoding padding to the end. Both give the same tokens: a
    uniform number is drawn for every row at every step (:func:`llm_coop_envs.lm.engine.pick`), so a row's draws never depend on
    which other rows are still running. ``progress(step, running rows)`` is called after each step.

    ``fast_step``, when given, runs the decode steps instead of the model's forward (with the adapters
    of ``prompt_of_row``'s rows built in), where the prompts' cache is a :class:`RowCache`."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    index = torch.tensor(list(prompt_of_row), device=device)
    cache, last_logits = _prefill(model, prompts, settings.pad_id, adapter_scope, index, settings.max_new_tokens)
    logits = last_logits[index].float()
    # The attention mask of every step, allocated once: prompt part, then one column per new token.
    full_mask = torch.zeros(len(index), width + settings.max_new_tokens, dtype=mask.dtype, device=device)
    full_mask[:, :width] = mask[index]
    position = full_mask.sum(-1, keepdim=True)
    rows = len(prompt_of_row)
    running = list(range(rows))  # the original row of each batch row
    tokens: list[list[int]] = [[] for _ in range(rows)]
    logprobs: list[list[float]] = [[] for _ in range(rows)]
    finished = torch.zeros(rows, dtype=torch.bool, device=device)
    eos = torch.tensor(sorted(settings.eos_ids), dtype=torch.long, device=device)
    fast = fast_step if isinstance(cache, RowCache) else None
    with contextlib.ExitStack() as scopes:
        if fast is None:
            scopes.enter_context(adapter_scope(prompt_of_row))
        for step in range(settings.max_new_tokens):
            if step < settings.min_new_tokens and len(eos):
                logits[:, eos] = -float("inf")
            chosen, chosen_logprobs = pick(logits, settings, rows, running)
            chosen = torch.where(finished, torch.full_like(chosen, settings.pad_id), chosen)
            for row, token, logprob, done in zip(running, chosen.tolist(), chosen_logprobs.tolist(), finished.tolist()):
                if not done:
                    tokens[row].append(token)
                    logprobs[row].append(logprob)
            if len(eos):
                finished |= torch.isin(chosen, eos)
            if (settings.stop or settings.stop_after_code) and decode_text is not None:
                finished |= _stopped([tokens[row] for row in running], finished, settings, decode_text, device)
            if progress is not None:
                progress(step, int((~finished).sum()))
            if bool(finished.all()) or step + 1 == settings.max_new_tokens:
                break
            if compact and worth_compacting(finished):
                keep = (~finished).nonzero().squeeze(-1)
                cache.reorder_cache(keep)
                full_mask, position, chosen, finished = full_mask[keep], position[keep], chosen[keep], finished[keep]
                running = [running[i] for i in keep.tolist()]
                if fast is not None:
                    fast.keep_rows(keep)
                else:
                    scopes.close()  # the adapters' per-row matrices follow the rows
                    scopes.enter_context(adapter_scope([prompt_of_row[row] for row in running]))
            full_mask[:, width + step] = 1
            if fast is not None:
                logits = fast(chosen[:, None], full_mask[:, : width + step + 1], position, cache)
            else:
                out = model(input_ids=chosen[:, None], attention_mask=full_mask[:, : width + step + 1],
                            position_ids=position, use_cache=True, **passing(cache))
                logits = out.logits[:, -1].float()
            position = position + 1
    return tokens, logprobs


def _prefill(model, prompts: Sequence[Sequence[int]], pad_id: int, adapter_scope: AdapterScope,
             index: torch.Tensor, new_tokens: int):
    """The KV cache of every prompt, each prompt's keys/values copied to its sample rows (``index``) and
    preallocated for ``new_tokens`` more positions, and each prompt's last logits.

    Prompts run in length-ordered chunks of about :data:`PREFILL_TOKENS`; their caches are joined
    left-padded to the longest prompt (the padded positions are masked, as in one padded forward).
    A model whose cache layers are not plain full attention runs all prompts in one forward."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    chunks = length_chunks(order, [len(p) for p in prompts], PREFILL_TOKENS)
    outputs = [_prompt_forward(model, [prompts[i] for i in chunk], pad_id, adapter_scope, chunk, device)
               for chunk in chunks] if len(chunks) > 1 else []
    caches = [cache_of(out) for out in outputs]
    if not caches or not all(RowCache.supports(c) for c in caches):  # one forward, in the prompts' order
        out = _prompt_forward(model, list(prompts), pad_id, adapter_scope, range(len(prompts)), device)
        cache = cache_of(out)
        if RowCache.supports(cache):
            return RowCache(cache, index, new_tokens), out.logits[:, -1]
        cache.reorder_cache(index)
        return cache, out.logits[:, -1]
    logits = torch.cat([out.logits[:, -1] for out in outputs])
    position = torch.empty(len(prompts), dtype=torch.long, device=device)
    position[torch.tensor([i for chunk in chunks for i in chunk], device=device)] = torch.arange(len(prompts), device=device)
    layers = []
    for depth in range(len(caches[0].layers)):
        keys = [_left_pad(c.layers[depth].keys, width) for c in caches]
        values = [_left_pad(c.layers[depth].values, width) for c in caches]
        layers.append((torch.cat(keys)[position], torch.cat(values)[position]))
    return RowCache.from_tensors(layers, index, new_tokens), logits[position]




def _prompt_forward(model, prompts, pad_id: int, adapter_scope: AdapterScope, prompt_indices, device):
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad_id] * (width - len(p)) + list(p) for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    with adapter_scope(list(prompt_indices)):
        return model(input_ids=ids, attention_mask=mask, position_ids=_positions(mask), use_cache=True, logits_to_keep=1)


def _left_pad(tensor: torch.Tensor, width: int) -> torch.Tensor:
    """``[rows, heads, length, dim]`` padded with zeros on the left of the length axis to ``width``."""
    missing = width - tensor.shape[2]
    return torch.nn.functional.pad(tensor, (0, 0, missing, 0)) if missing else tensor




def _positions(mask: torch.Tensor) -> torch.Tensor:
    return (mask.cumsum(-1) - 1).clamp(min=0)




def stops(text: str, settings: DecodeSettings) -> bool:
    """Whether a reply's text now holds a stop string or (``stop_after_code``) a closed code block."""
    return any(s and s in text for s in settings.stop) or (settings.stop_after_code and code_block_end(text) is not None)


def _stopped(tokens, finished, settings: DecodeSettings, decode_text, device) -> torch.Tensor:
    """Rows whose text now holds a stop string or (``stop_after_code``) a closed code block."""
    hits = [not done and stops(decode_text(row), settings) for row, done in zip(tokens, finished.tolist())]
    return torch.tensor(hits, dtype=torch.bool, device=device)
