"""A small sampling loop over a causal LM with the KV cache: prefill each distinct prompt once.

Why not ``model.generate``: in a group of G samples every row shares its prompt, and on a CPU the
prompt pass (~300 chat-template tokens) of G rows costs as much as ~40 decode steps. Here each
distinct (adapter, prompt) pair is prefilled once, its cache rows are copied to its samples, and the
decode steps run all rows (all agents) together. Sampling matches ``generate``'s: temperature,
then nucleus (``top_p``) filtering, then a draw from the softmax; greedy when temperature is 0.
A row ends at an end-of-sequence token, a stop string, or ``max_new_tokens``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence

import torch


@dataclasses.dataclass(frozen=True)
class DecodeSettings:
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    eos_ids: frozenset[int] = frozenset()
    pad_id: int = 0
    stop: tuple[str, ...] = ()
    min_new_tokens: int = 0
    """End-of-sequence is forbidden before this many tokens (benchmarks use it to fix the work)."""


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
) -> list[list[int]]:
    """New tokens for each row (row ``i`` continues ``prompts[prompt_of_row[i]]``), without padding."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[settings.pad_id] * (width - len(p)) + list(p) for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    with adapter_scope(range(len(prompts))):
        out = model(input_ids=ids, attention_mask=mask, position_ids=_positions(mask), use_cache=True, logits_to_keep=1)
    index = torch.tensor(list(prompt_of_row), device=device)
    cache = out.past_key_values
    cache.reorder_cache(index)  # each prompt's keys/values copied to its sample rows
    logits, mask = out.logits[index, -1].float(), mask[index]
    position = mask.sum(-1, keepdim=True)
    rows = len(prompt_of_row)
    tokens: list[list[int]] = [[] for _ in range(rows)]
    finished = torch.zeros(rows, dtype=torch.bool, device=device)
    eos = torch.tensor(sorted(settings.eos_ids), dtype=torch.long, device=device)
    with adapter_scope(prompt_of_row):
        for step in range(settings.max_new_tokens):
            if step < settings.min_new_tokens and len(eos):
                logits[:, eos] = -float("inf")
            chosen = _pick(logits, settings)
            chosen = torch.where(finished, torch.full_like(chosen, settings.pad_id), chosen)
            for row, (token, done) in enumerate(zip(chosen.tolist(), finished.tolist())):
                if not done:
                    tokens[row].append(token)
            finished |= torch.isin(chosen, eos) if len(eos) else torch.zeros_like(finished)
            if settings.stop and decode_text is not None:
                finished |= _stopped(tokens, finished, settings.stop, decode_text, device)
            if bool(finished.all()) or step + 1 == settings.max_new_tokens:
                break
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
            out = model(input_ids=chosen[:, None], attention_mask=mask, position_ids=position,
                        past_key_values=cache, use_cache=True)
            cache, logits, position = out.past_key_values, out.logits[:, -1].float(), position + 1
    return tokens


def _positions(mask: torch.Tensor) -> torch.Tensor:
    return (mask.cumsum(-1) - 1).clamp(min=0)


def _pick(logits: torch.Tensor, settings: DecodeSettings) -> torch.Tensor:
    if settings.temperature <= 0:
        return logits.argmax(-1)
    scores = logits / settings.temperature
    if settings.top_p < 1.0:
        scores = _nucleus(scores, settings.top_p)
    return torch.multinomial(torch.softmax(scores, dim=-1), 1).squeeze(-1)


def _nucleus(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """Drop the least likely tokens whose total probability stays within 1 - top_p (keep at least one)."""
    sorted_scores, order = torch.sort(scores, descending=False)
    cumulative = sorted_scores.softmax(-1).cumsum(-1)
    drop = cumulative <= (1 - top_p)
    drop[:, -1] = False
    return scores.masked_fill(drop.scatter(1, order, drop), -float("inf"))


def _stopped(tokens, finished, stop, decode_text, device) -> torch.Tensor:
    hits = [not done and any(s and s in decode_text(row) for s in stop) for row, done in zip(tokens, finished.tolist())]
    return torch.tensor(hits, dtype=torch.bool, device=device)
