"""One engine over the owned :class:`~llm_coop_envs.lm.model.Transformer`: prefill prompts, sample
continuations, score completions. It knows token ids only (the callers tokenize and decode).

* :meth:`Engine.prefill`: each prompt's keys and values, run in length-ordered chunks (a forward pads a
  prompt only to its neighbours' length), joined left-padded to the longest prompt.
* :meth:`Engine.sample`: each distinct prompt is prefilled once and its cache rows copied to its
  samples; the decode steps then run every row (every agent: each row carries its adapter slot)
  together, on a cache allocated once, and finished rows leave the batch. The draw is the one
  :func:`~llm_coop_envs.lm.distribution.sampling_log_probs` describes (temperature, then nucleus),
  one uniform number per row per step, so a row's tokens never depend on which other rows still run.
* :meth:`Engine.score`: per-token log-probs of completions under the sampling distribution, with
  gradients; rows that share a prompt (a group's G replies) run the prompt once and continue copies
  of its cache.
* :meth:`Engine.read` and :meth:`Engine.text_log_probs`: a reader's scores (the writing reward's model):
  a source read once, then texts after it, each token's log-prob under the model's softmax, no gradients,
  the output layer run only where a scored token is predicted.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Callable, Sequence

import torch

from llm_coop_envs.lm.distribution import sampling_log_probs, token_log_probs
from llm_coop_envs.lm.model import KVCache, Transformer

PREFILL_TOKENS = 4096
"""Padded prompt tokens per prefill forward: prompts go in length order, so each forward pads to the
longest of its neighbours, not of the whole batch."""


@dataclasses.dataclass(frozen=True)
class Sampling:
    max_new_tokens: int
    temperature: float = 0.0
    """0: greedy."""
    top_p: float = 1.0
    eos_ids: frozenset[int] = frozenset()
    pad_id: int = 0
    min_new_tokens: int = 0
    """End-of-sequence is forbidden before this many tokens (benchmarks use it to fix the work)."""


Stopped = Callable[[Sequence[int], Sequence[list[int]]], Sequence[bool]]
"""Given the running rows and their tokens so far, which of them end now (a stop string, a closed
code block: what only the caller's tokenizer can read)."""


@dataclasses.dataclass
class Prefilled:
    cache: KVCache
    mask: torch.Tensor
    """[prompts, width]: 1 where a prompt holds a token (prompts are left-padded to the longest)."""
    last_logits: torch.Tensor
    """[prompts, vocabulary]: each prompt's prediction of its first new token."""


@dataclasses.dataclass
class Read:
    """A prefix run once (:meth:`Engine.read`): its tokens, every layer's keys and values, and its last
    position's final hidden state (which predicts the first token after it)."""

    ids: list[int]
    cache: KVCache
    """The engine's cache (a scoring model the owned module does not cover keeps transformers' own here)."""
    last: torch.Tensor
    """[1, hidden]."""


class Engine:
    def __init__(self, model: Transformer, *, packed: bool = True) -> None:
        self.model = model
        self.packed = packed
        """Sample on fused, packed copies of the weights (inference only: nothing is trained there)."""

    @property
    def device(self) -> torch.device:
        return self.model.embed.device

    @torch.no_grad()
    def prefill(self, prompts: Sequence[Sequence[int]], adapters: Sequence[int] | None = None,
                room: int = 0, pad_id: int = 0) -> Prefilled:
        """Every prompt's cache (with ``room`` more positions allocated), mask and last logits.
        ``adapters``: each prompt's adapter slot (``-1``: the base model)."""
        width = max(len(p) for p in prompts)
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        cache = KVCache(self.model.shape, len(prompts), width + room, dtype=self.model.embed.dtype,
                        device=self.device)
        last = torch.empty(len(prompts), self.model.shape.vocab, device=self.device)
        for chunk in length_chunks(order, [len(p) for p in prompts], PREFILL_TOKENS):
            ids, mask = _left_padded([prompts[i] for i in chunk], pad_id, self.device)
            part = KVCache(self.model.shape, len(chunk), ids.shape[1], dtype=self.model.embed.dtype,
                           device=self.device)
            slots = None if adapters is None else [adapters[i] for i in chunk]
            last[chunk] = self.model(ids, mask, cache=part, adapters=slots, keep=1)[:, -1].float()
            rows, offset = torch.tensor(chunk, device=self.device), width - ids.shape[1]
            for layer in range(self.model.shape.layers):
                cache.keys[layer][rows, :, offset:width] = part.keys[layer]
                cache.values[layer][rows, :, offset:width] = part.values[layer]
        cache.length = width
        return Prefilled(cache, _left_padded(prompts, pad_id, self.device)[1], last)

    @torch.no_grad()
    def sample(self, prompts: Sequence[Sequence[int]], prompt_of_row: Sequence[int], settings: Sampling,
               adapters: Sequence[int] | None = None, stopped: Stopped | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[list[list[int]], list[list[float]]]:
        """New tokens for each row (row ``i`` continues ``prompts[prompt_of_row[i]]``), without padding,
        and each token's log-probability under the sampling distribution. ``adapters``: each prompt's
        slot. A row ends at an end-of-sequence token, when ``stopped`` says so, or at ``max_new_tokens``.
        ``progress(step, running rows)`` after each step."""
        # The prompts run on the live weights: for a forward of many tokens, MKL's product of the plain
        # weights beat oneDNN's packed one (~3.5x on the prefill of two ~100-token prompts); the packed
        # copies pay off for the decode steps' few rows.
        first = self.prefill(prompts, adapters, settings.max_new_tokens, settings.pad_id)
        with self.model.packed() if self.packed else contextlib.nullcontext():
            return self._decode(first, prompt_of_row, settings, adapters, stopped, progress)

    def _decode(self, first: Prefilled, prompt_of_row, settings, adapters, stopped, progress):
        index = torch.tensor(list(prompt_of_row), device=self.device)
        cache, width = shared(first.cache, index), first.mask.shape[1]
        logits = first.last_logits[index]
        slots = None if adapters is None else torch.tensor(list(adapters), device=self.device)[index]
        # The mask of every step, allocated once: the prompt's columns, then one per new token.
        mask = torch.zeros(len(index), width + settings.max_new_tokens, dtype=torch.long, device=self.device)
        mask[:, :width] = first.mask[index]
        position = mask.sum(-1, keepdim=True)
        rows = len(index)
        running = list(range(rows))  # the original row of each batch row
        tokens: list[list[int]] = [[] for _ in range(rows)]
        logprobs: list[list[float]] = [[] for _ in range(rows)]
        finished = torch.zeros(rows, dtype=torch.bool, device=self.device)
        eos = torch.tensor(sorted(settings.eos_ids), dtype=torch.long, device=self.device)
        for step in range(settings.max_new_tokens):
            chosen = take_step(logits, settings, step, eos, running, finished, tokens, logprobs)
            if stopped is not None:
                ends = stopped(running, [tokens[row] for row in running])
                finished |= torch.tensor(list(ends), dtype=torch.bool, device=self.device)
            if progress is not None:
                progress(step, int((~finished).sum()))
            if bool(finished.all()) or step + 1 == settings.max_new_tokens:
                break
            if worth_compacting(finished):
                keep = (~finished).nonzero().squeeze(-1)
                cache.select(keep)
                mask, position, chosen, finished = mask[keep], position[keep], chosen[keep], finished[keep]
                slots = None if slots is None else slots[keep]
                running = [running[i] for i in keep.tolist()]
            mask[:, width + step] = 1
            logits = self.model(chosen[:, None], mask[:, : width + step + 1], position, cache, slots, keep=1)[:, -1]
            logits = logits.float()
            position = position + 1
        return tokens, logprobs

    def score(self, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]],
              adapters: Sequence[int] | None = None, temperature: float = 1.0, top_p: float = 1.0,
              pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token log-probs of each completion given its prompt, ``([rows, T], mask [rows, T])``, under
        temperature and nucleus (1.0, 1.0: the model's softmax), with gradients. ``adapters``: each
        row's slot. Rows that share (prompt, adapter) run the prompt once: its cache, kept with
        gradients, is copied to them, and they run only their completions."""
        slots = [-1] * len(prompts) if adapters is None else list(adapters)
        keys = [(tuple(p), s) for p, s in zip(prompts, slots)]
        distinct = list(dict.fromkeys(keys))
        if len(distinct) < len(keys) and min(len(p) for p, _ in distinct) >= 2:
            logits, targets = self._shared_prompt_logits(distinct, keys, completions, adapters, pad_id)
        else:
            logits, targets = self._full_row_logits(prompts, completions, adapters, pad_id)
        logps = token_log_probs(logits, targets, temperature, top_p)
        width = targets.shape[1]
        mask = torch.tensor([[1] * len(c) + [0] * (width - len(c)) for c in completions], device=self.device,
                            dtype=logps.dtype)
        return logps, mask

    def _full_row_logits(self, prompts, completions, adapters, pad_id):
        """Rows ``[left pad | prompt | completion | right pad]``, every completion from the same column,
        so only the last T positions' logits are made; the last column predicts nothing scored."""
        rows, masks, prompt_width, width = full_rows(prompts, completions, pad_id)
        ids = torch.tensor(rows, device=self.device)
        mask = torch.tensor(masks, device=self.device)[:, :-1]
        logits = self.model(ids[:, :-1], mask, adapters=adapters, keep=width)  # position t predicts t + 1
        return logits, ids[:, prompt_width:]

    def _shared_prompt_logits(self, distinct, keys, completions, adapters, pad_id):
        """Each distinct (prompt, adapter) but the prompt's last token runs once; its cache rows go to
        the replies, which run ``[last prompt token | completion | right pad]``."""
        prefixes = [p[:-1] for p, _ in distinct]
        ids, prefix_mask = _left_padded(prefixes, pad_id, self.device)
        cache = KVCache(self.model.shape, len(distinct), None, dtype=self.model.embed.dtype, device=self.device)
        self.model.hidden(ids, prefix_mask, cache=cache, adapters=None if adapters is None else [s for _, s in distinct])
        order = {key: i for i, key in enumerate(distinct)}
        index = torch.tensor([order[key] for key in keys], device=self.device)
        cache = shared(cache, index)  # index_select: gradients flow back into the shared prompt pass
        width = max(max(len(c) for c in completions), 1)
        rows = torch.tensor([[p[-1], *c] + [pad_id] * (width - len(c)) for (p, _), c in zip(keys, completions)],
                            device=self.device)
        own = torch.tensor([[1] * (len(c) + 1) + [0] * (width - len(c)) for c in completions], device=self.device)
        mask = torch.cat([prefix_mask[index], own[:, :-1]], dim=-1)
        start = torch.tensor([len(p) - 1 for p, _ in keys], device=self.device)[:, None]
        positions = start + torch.arange(width, device=self.device)
        logits = self.model(rows[:, :-1], mask, positions, cache, adapters)
        return logits, rows[:, 1:]

    @torch.no_grad()
    def read(self, ids: Sequence[int]) -> Read:
        """``ids`` run once, kept for any number of :meth:`text_log_probs` calls after it."""
        cache = KVCache(self.model.shape, 1, None, dtype=self.model.embed.dtype, device=self.device)
        hidden = self.model.hidden(torch.tensor([list(ids)], device=self.device), cache=cache)
        return Read(list(ids), cache, hidden[0, -1:])

    @torch.no_grad()
    def text_log_probs(self, rows: Sequence[Sequence[int]], firsts: Sequence[int], after: Read | None = None,
                       pad_id: int = 0) -> list[list[float]]:
        """For each row, the log-probability (the model's softmax) of each of its tokens from index
        ``firsts[i]`` on, given ``after``'s tokens (when given) and the row's earlier tokens. Without
        ``after`` nothing predicts a row's first token: it is never scored. Rows run as one right-padded
        batch, after copies of ``after``'s cache; the output layer runs only where a scored token is
        predicted (a padded batch's full logits would take gigabytes)."""
        lengths = [len(row) for row in rows]
        width = max(max(lengths), 1)
        ids = torch.tensor([list(row) + [pad_id] * (width - len(row)) for row in rows], device=self.device)
        mask = torch.tensor([[1] * n + [0] * (width - n) for n in lengths], device=self.device)
        cache = None
        if after is not None:
            cache = shared(after.cache, torch.zeros(len(rows), dtype=torch.long, device=self.device))
            mask = torch.cat([torch.ones(len(rows), len(after.ids), dtype=mask.dtype, device=self.device), mask], 1)
        hidden = self.model.hidden(ids, mask, cache=cache)
        scores = []
        for row, (length, first) in enumerate(zip(lengths, firsts)):
            states = hidden[row, :length]
            if after is not None:
                states = torch.cat([after.last, states])  # states[k] now predicts the row's token k
                start, picked = first, states[first:length]
            else:
                start = max(first, 1)
                picked = states[start - 1 : length - 1]
            logits = self.model.logits(picked).float()
            scores.append(torch.log_softmax(logits, dim=-1).gather(-1, ids[row, start:length, None]).squeeze(-1).tolist())
        return scores


def _left_padded(prompts: Sequence[Sequence[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad_id] * (width - len(p)) + list(p) for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    return ids, mask


def shared(cache: KVCache, index: torch.Tensor) -> KVCache:
    """A prompt's keys and values given to its rows: a cache whose row ``i`` is ``cache``'s row ``index[i]``.
    The engine's one way of sharing a prefix (sampling, scoring, reading); ``cache`` itself is left as it
    was (a reader keeps a source's cache for later calls)."""
    copied_cache = copy.copy(cache)
    copied_cache.select(index)  # new tensors for the copy; the original's lists are not touched
    return copied_cache


def length_chunks(order: list[int], lengths: list[int], budget: int) -> list[list[int]]:
    """``order`` (prompts by length) cut so that each chunk's padded size stays near ``budget`` tokens."""
    chunks: list[list[int]] = [[]]
    for i in order:
        if chunks[-1] and (len(chunks[-1]) + 1) * lengths[i] > budget:
            chunks.append([])
        chunks[-1].append(i)
    return chunks


def worth_compacting(finished: torch.Tensor) -> bool:
    """Drop finished rows once they are a quarter of the batch: each drop copies the KV cache once."""
    done = int(finished.sum())
    return done > 0 and done * 4 >= len(finished)


def take_step(logits: torch.Tensor, settings, step: int, eos: torch.Tensor, running: Sequence[int],
              finished: torch.Tensor, tokens: list[list[int]], logprobs: list[list[float]]) -> torch.Tensor:
    """One step of a decode loop (the engine's and the fallback's): end-of-sequence forbidden before
    ``min_new_tokens``, the draw (:func:`pick`), each running row's token and log-prob appended, rows that
    drew an end token marked in ``finished`` (in place). Returns the chosen tokens (padding for rows that
    had already finished), the next forward's input."""
    if step < settings.min_new_tokens and len(eos):
        logits[:, eos] = -float("inf")
    chosen, chosen_logprobs = pick(logits, settings, len(tokens), running)
    chosen = torch.where(finished, torch.full_like(chosen, settings.pad_id), chosen)
    for row, token, logprob, done in zip(running, chosen.tolist(), chosen_logprobs.tolist(), finished.tolist()):
        if not done:
            tokens[row].append(token)
            logprobs[row].append(logprob)
    if len(eos):
        finished |= torch.isin(chosen, eos)
    return chosen


def full_rows(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]],
              pad_id: int) -> tuple[list[list[int]], list[list[int]], int, int]:
    """Rows ``[left pad | prompt | completion | right pad]`` with every completion starting in the same
    column, their masks, the prompts' width and the completions' (at least 1): the layout that scores
    completions from the last T positions' logits only."""
    prompt_width = max(len(p) for p in prompts)
    width = max(max(len(c) for c in completions), 1)
    rows, masks = [], []
    for prompt, completion in zip(prompts, completions):
        left, right = prompt_width - len(prompt), width - len(completion)
        rows.append([pad_id] * left + list(prompt) + list(completion) + [pad_id] * right)
        masks.append([0] * left + [1] * (len(prompt) + len(completion)) + [0] * right)
    return rows, masks, prompt_width, width


def pick(logits: torch.Tensor, settings: Sampling, rows: int, running: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The next token of each running row and its log-probability under the sampling distribution.

    Sampling inverts each row's cumulative distribution at one uniform draw: one number per row (an
    exponential race over the vocabulary, what ``torch.multinomial`` does, draws one per token). The
    draw is made for all ``rows`` of the generation, running or not, so each row's draw is the same
    whichever rows are still in the batch."""
    log_probs = sampling_log_probs(logits, settings.temperature, settings.top_p)
    if settings.temperature <= 0:
        chosen = logits.argmax(-1)
    else:
        uniform = torch.rand(rows, 1, dtype=torch.float64, device=logits.device)
        if len(running) < rows:
            uniform = uniform[torch.tensor(running, device=logits.device)]
        cumulative = log_probs.exp().double().cumsum(-1)
        total = cumulative[:, -1:]
        # Strictly below the total, so the first cumulative mass above it belongs to a token with p > 0.
        target = torch.minimum(uniform * total, torch.nextafter(total, torch.zeros_like(total)))
        chosen = torch.searchsorted(cumulative, target, right=True).squeeze(-1)
    return chosen, log_probs.gather(-1, chosen[:, None]).squeeze(-1)
