"""Per-token log-probs of completions given their prompts: the numbers the loss is made of.

Log-probs are taken under the distribution the replies were sampled from (temperature and top-p,
:mod:`llm_coop_envs.lm.distribution`): position t of a forward scores token t + 1.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from trainers.config import SamplingConfig
from llm_coop_envs.cache_api import cache_of, passing
from llm_coop_envs.lm.distribution import token_log_probs
from llm_coop_envs.lm.engine import full_rows


def completion_logprobs(
    model: torch.nn.Module,
    tokenizer: Any,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    device: torch.device,
    sampling: SamplingConfig | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probs of each completion given its prompt: ([B, T], mask [B, T]), under the
    sampling distribution of ``sampling`` (temperature, top-p; ``None``: the plain softmax).

    The G replies of a group share their prompt, and the prompt (~300 chat-template tokens) is most
    of each row. So when prompts repeat, each distinct prompt runs once and its KV cache (with
    grad) is copied to its rows, which then run only their completions: the same log-probs and
    gradients (:func:`_logits_shared_prompts`). Otherwise every row runs in full (:func:`_logprobs_full_rows`).
    """
    distinct = dict.fromkeys(tuple(p) for p in prompts)
    if len(distinct) < len(prompts) and min(len(p) for p in distinct) >= 2:
        logits, targets = _logits_shared_prompts(model, tokenizer, list(distinct), prompts, completions, device)
    else:
        logits, targets = _logits_full_rows(model, tokenizer, prompts, completions, device)
    return _gather(logits, targets, completions, device, sampling)


def _logprobs_full_rows(model, tokenizer, prompts, completions, device, sampling=None):
    """Every row in full (no prompt sharing): the reference the shared-prompt path must equal."""
    return _gather(*_logits_full_rows(model, tokenizer, prompts, completions, device), completions, device, sampling)


def _logits_full_rows(model, tokenizer, prompts, completions, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``[left pad | prompt | completion | right pad]`` with every completion starting in the same
    column, so the logits of the last T positions (``logits_to_keep``) cover all of them and the full
    vocabulary is never materialised for prompt positions. The last column predicts no scored token
    and is not fed."""
    rows, masks, prompt_width, width = full_rows(prompts, completions, pad_token_id(tokenizer))
    input_ids = torch.tensor(rows, device=device)
    attention = torch.tensor(masks, device=device)[:, :-1]
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    logits = model(  # position t predicts token t + 1
        input_ids=input_ids[:, :-1], attention_mask=attention, position_ids=positions, logits_to_keep=width
    ).logits
    return logits, input_ids[:, prompt_width:]


def _logits_shared_prompts(model, tokenizer, distinct, prompts, completions, device):
    """Each distinct prompt but its last token runs once (left-padded, cache kept with grad); the
    cache rows are copied to the replies, which run ``[last prompt token | completion | right pad]``."""
    pad = pad_token_id(tokenizer)
    prefix_width = max(len(p) - 1 for p in distinct)
    prefix = torch.tensor([[pad] * (prefix_width - len(p) + 1) + list(p[:-1]) for p in distinct], device=device)
    prefix_mask = torch.tensor([[0] * (prefix_width - len(p) + 1) + [1] * (len(p) - 1) for p in distinct], device=device)
    out = model(input_ids=prefix, attention_mask=prefix_mask, position_ids=(prefix_mask.cumsum(-1) - 1).clamp(min=0),
                use_cache=True, logits_to_keep=1)
    order = {p: i for i, p in enumerate(distinct)}
    index = torch.tensor([order[tuple(p)] for p in prompts], device=device)
    cache = cache_of(out)
    cache.reorder_cache(index)  # index_select: gradients flow back into the shared prompt pass
    width = max(max(len(c) for c in completions), 1)
    rows = torch.tensor([[p[-1], *c] + [pad] * (width - len(c)) for p, c in zip(prompts, completions)], device=device)
    own = torch.tensor([[1] * (len(c) + 1) + [0] * (width - len(c)) for c in completions], device=device)
    attention = torch.cat([prefix_mask[index], own[:, :-1]], dim=-1)
    start = torch.tensor([len(p) - 1 for p in prompts], device=device)[:, None]
    positions = start + torch.arange(width, device=device)
    logits = model(input_ids=rows[:, :-1], attention_mask=attention, position_ids=positions, **passing(cache),
                   use_cache=True).logits  # position t predicts token t + 1; the last token predicts nothing scored
    return logits, rows[:, 1:]


def _gather(
    logits: torch.Tensor, targets: torch.Tensor, completions, device, sampling: SamplingConfig | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    width = targets.shape[1]
    temperature, top_p = (sampling.temperature, sampling.top_p) if sampling is not None else (1.0, 1.0)
    logps = token_log_probs(logits, targets, temperature, top_p)
    mask = [[1] * len(c) + [0] * (width - len(c)) for c in completions]
    return logps, torch.tensor(mask, device=device, dtype=logps.dtype)


@contextlib.contextmanager
def lora_dropout_active(model: torch.nn.Module) -> Iterator[None]:
    """Put only the LoRA dropout modules in train mode for the loss pass (the base model's own dropout,
    if any, stays off: the sampler ran without it)."""
    dropouts = [m for name, m in model.named_modules() if ".lora_dropout." in f".{name}." and m.__class__.__name__ == "Dropout"]
    for module in dropouts:
        module.train()
    try:
        yield
    finally:
        for module in dropouts:
            module.eval()


def pad_token_id(tokenizer: Any) -> int:
    """The id that pads rows: the tokenizer's pad token, else its end-of-sequence token, else 0."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    return int(pad if pad is not None else 0)
