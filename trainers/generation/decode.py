"""The fallback sampling loop: a model the project's own module does not cover (another architecture,
another adapter kind) samples through transformers' own forward and KV cache.

The loop is the engine's (:mod:`llm_coop_envs.lm.engine`), on transformers' calls: each distinct
(adapter, prompt) pair is prefilled once (all prompts in one padded forward) and its cache rows copied to
its samples; the decode steps run all rows (all agents) together, each row through its adapter (the
``adapter_scope`` the caller gives); rows that finish leave the batch. The draw is the engine's
(:func:`llm_coop_envs.lm.engine.pick`: temperature, then nucleus, one uniform number per row and step;
greedy at temperature 0). A row ends at any end-of-sequence token (``eos_ids``), a stop string, the
closing fence of its code block (``stop_after_code``), or ``max_new_tokens``. Each chosen token's
log-probability under the sampling distribution is returned with it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence

import torch

from llm_coop_envs.cache_api import cache_of, passing
from llm_coop_envs.lm.engine import take_step, worth_compacting
from trainers.generation.base import code_block_end


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
) -> tuple[list[list[int]], list[list[float]]]:
    """New tokens for each row (row ``i`` continues ``prompts[prompt_of_row[i]]``), without padding,
    and each token's log-probability under the sampling distribution.

    With ``compact`` (the default), rows that have finished leave the batch (the KV cache keeps only the
    running rows); without it they keep decoding padding to the end. Both give the same tokens: a
    uniform number is drawn for every row at every step, so a row's draws never depend on which other
    rows are still running. ``progress(step, running rows)`` is called after each step."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    index = torch.tensor(list(prompt_of_row), device=device)
    ids = torch.tensor([[settings.pad_id] * (width - len(p)) + list(p) for p in prompts], device=device)
    with adapter_scope(list(range(len(prompts)))):
        out = model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                    use_cache=True, logits_to_keep=1)
    cache = cache_of(out)
    cache.reorder_cache(index)  # each prompt's keys and values copied to its sample rows
    logits = out.logits[:, -1][index].float()
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
    with contextlib.ExitStack() as scopes:
        scopes.enter_context(adapter_scope(prompt_of_row))
        for step in range(settings.max_new_tokens):
            chosen = take_step(logits, settings, step, eos, running, finished, tokens, logprobs)
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
                scopes.close()  # the rows' adapters follow the rows
                scopes.enter_context(adapter_scope([prompt_of_row[row] for row in running]))
            full_mask[:, width + step] = 1
            out = model(input_ids=chosen[:, None], attention_mask=full_mask[:, : width + step + 1],
                        position_ids=position, use_cache=True, **passing(cache))
            logits = out.logits[:, -1].float()
            position = position + 1
    return tokens, logprobs


def stops(text: str, settings: DecodeSettings) -> bool:
    """Whether a reply's text now holds a stop string or (``stop_after_code``) a closed code block."""
    return any(s and s in text for s in settings.stop) or (settings.stop_after_code and code_block_end(text) is not None)


def _stopped(tokens, finished, settings: DecodeSettings, decode_text, device) -> torch.Tensor:
    """Rows whose text now holds a stop string or (``stop_after_code``) a closed code block."""
    hits = [not done and stops(decode_text(row), settings) for row, done in zip(tokens, finished.tolist())]
    return torch.tensor(hits, dtype=torch.bool, device=device)
