"""The language model that reads the texts of the ``-v3`` writing rewards.

:class:`LanguageModel` scores continuations: for each ``(prefix, text)`` request it returns the
log-probability of every token of ``text`` after ``prefix`` (:class:`TokenScores`). The rewards ask
for three kinds of prefixes (:func:`prompts`): none but a neutral header (how likely the text is on
its own: fluency), the source (how much the source explains it: grounding), the source and the
partner's text (what the second text adds: complementarity).

Cost and sharing: the model is loaded at the first scored step, never at import (importing
``llm_coop_envs`` must not import torch); one instance per model path is shared by every env and
every ``copy.deepcopy`` of one; all requests of a step go through one padded forward pass (split
into chunks of at most ``max_batch_tokens`` and of similar lengths); the source is read once and its
keys and values are kept for the last few sources (the next call on the same source reuses them);
results are cached per ``(context, prefix, text)``, so the same text on the same source is scored once
per process. fp32 on CPU by default.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import math
import threading
from collections.abc import Sequence
from typing import Any

from llm_coop_envs.cache_api import cache_of, passing

DEFAULT_MODEL = "default"
"""The project's default small model (SmolLM2-135M-Instruct, see ``llm_coop_envs.lm.cache``)."""
INSTALL_HINT = "pip install 'llm-coop-envs[train]'"

Request = tuple[str, str, str]
"""(context, prefix, text): score the tokens of text after context + prefix. Requests with the same
context (the source) share one forward pass over it (its keys and values are reused)."""


class LanguageModelUnavailable(RuntimeError):
    """torch/transformers or the model files are missing; the message says how to get them."""


@dataclasses.dataclass(frozen=True)
class TokenScores:
    """Log-probabilities (nats) of a text's tokens and where each token ends in the text."""

    logprobs: tuple[float, ...]
    ends: tuple[int, ...]
    """Character offset in the text just after each token (to score sentence spans)."""

    @property
    def total(self) -> float:
        return math.fsum(self.logprobs)

    def __len__(self) -> int:
        return len(self.logprobs)

    def span(self, start: int, end: int) -> tuple[float, ...]:
        """The log-probabilities of the tokens that end within ``(start, end]`` of the text."""
        return tuple(lp for lp, e in zip(self.logprobs, self.ends) if start < e <= end)

    def part(self, start: int, end: int) -> TokenScores:
        """The tokens that end within ``(start, end]``, as the scores of the text's characters from ``start``
        (one request scoring two texts in a row gives each its own scores)."""
        kept = [(lp, e - start) for lp, e in zip(self.logprobs, self.ends) if start < e <= end]
        return TokenScores(tuple(lp for lp, _ in kept), tuple(e for _, e in kept))


def prompts(source_name: str, source: str) -> dict[str, str]:
    """What the ``-v3`` levels score texts after: the same closing line with and without the source
    before it (``context``), so their difference is what the source explains (pointwise mutual information)."""
    return {"context": f"The {source_name}:\n{source.strip()}\n\n", "closing": f"A text written from the {source_name}:\n"}


class LanguageModel:
    """A causal LM scoring texts, loaded lazily; :meth:`shared` gives one instance per model path.

    ``model`` may be a path, ``"default"`` (the cached default model; never downloaded here: a
    missing model raises with the command that fetches it), or an already built ``(model,
    tokenizer)`` pair (tests use a tiny random one).
    """

    _instances: dict[str, LanguageModel] = {}
    _instances_lock = threading.Lock()

    def __init__(self, model: Any = DEFAULT_MODEL, *, max_prefix_tokens: int = 768, max_text_tokens: int = 512,
                 max_batch_tokens: int = 16384, cache_size: int = 8192, device: str = "cpu") -> None:
        self.name = model if isinstance(model, str) else f"{type(model[0]).__name__}@{id(model[0]):x}"
        self._spec = model
        self.max_prefix_tokens = max_prefix_tokens
        self.max_text_tokens = max_text_tokens
        self.max_batch_tokens = max_batch_tokens
        self.device = device
        self._model = self._tokenizer = None
        self._engine = None
        """The project's engine over the model where the owned module covers it (the default model does);
        any other model reads through transformers' forward."""
        self._cache: collections.OrderedDict[Request, TokenScores] = collections.OrderedDict()
        self._cache_size = cache_size
        self._contexts: collections.OrderedDict[str, Any] = collections.OrderedDict()
        """The last few sources' keys and values (a multi-turn episode, a group's next call read the same source)."""
        self._contexts_size = 4
        self._lock = threading.Lock()
        self.forward_tokens = 0
        """Tokens run through the model so far (cache hits cost none): for cost reports."""

    @classmethod
    def shared(cls, model: Any = DEFAULT_MODEL) -> LanguageModel:
        """The process-wide instance for a model path (an instance or a pair is used as given)."""
        if isinstance(model, LanguageModel):
            return model
        if not isinstance(model, str):
            return cls(model)
        with cls._instances_lock:
            if model not in cls._instances:
                cls._instances[model] = cls(model)
            return cls._instances[model]

    # Copies of an env branch cheaply: they share the loaded model and its cache.
    def __deepcopy__(self, memo: dict) -> LanguageModel:
        return self

    def __reduce__(self):
        # A worker process gets its own lazily loaded instance of the same model path.
        if not isinstance(self._spec, str):
            raise TypeError("A LanguageModel built from an in-memory model cannot be sent to another process.")
        return (LanguageModel.shared, (self._spec,))

    def score(self, requests: Sequence[Request]) -> list[TokenScores]:
        """The token scores of every request; uncached ones in one batched pass."""
        with self._lock:
            missing = list(dict.fromkeys(r for r in requests if r not in self._cache))
            if missing:
                self._load()
                for request, scores in zip(missing, self._forward(missing)):
                    self._remember(request, scores)
            return [self._cached(r) for r in requests]

    def _cached(self, request: Request) -> TokenScores:
        self._cache.move_to_end(request)
        return self._cache[request]

    def _remember(self, request: Request, scores: TokenScores) -> None:
        self._cache[request] = scores
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as error:
            raise LanguageModelUnavailable(
                f"The -v3 writing rewards score texts with a language model and need torch and transformers "
                f"({error}): {INSTALL_HINT}"
            ) from None
        if isinstance(self._spec, str):
            self._model, self._tokenizer = _load_pretrained(self._spec)
        else:
            self._model, self._tokenizer = self._spec
        self._model.to(self.device).eval()
        from llm_coop_envs.lm.engine import Engine
        from llm_coop_envs.lm.load import owned_model

        owned = owned_model(self._model)
        self._engine = None if owned is None else Engine(owned.eval(), packed=False)

    def _ids(self, text: str) -> list[int]:
        return self._tokenizer(text, add_special_tokens=False)["input_ids"]

    def _context_ids(self, context: str) -> list[int]:
        """The context's ids; a long one keeps its beginning and its last tokens (where it hands over)."""
        ids = self._ids(context) if context else []
        if len(ids) > self.max_prefix_tokens:
            ids = ids[: self.max_prefix_tokens - 16] + ids[-16:]
        return ids

    def _encode(self, request: Request) -> tuple[list[int], list[int], list[int]]:
        """Prefix ids, text ids and each text token's end offset in the text."""
        _, prefix, text = request
        encoded = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = encoded["input_ids"][: self.max_text_tokens]
        ends = [end for _, end in encoded["offset_mapping"][: len(ids)]]
        return self._ids(prefix), ids, ends

    def _forward(self, requests: Sequence[Request]) -> list[TokenScores]:
        out: dict[Request, TokenScores] = {}
        by_context: dict[str, list[Request]] = {}
        for request in requests:
            by_context.setdefault(request[0], []).append(request)
        for context, group in by_context.items():
            state = self._context_state(context)
            encoded = [self._encode(r) for r in group]
            width = len(state.ids) if state else 0
            for chunk in _chunks(encoded, self.max_batch_tokens, width):
                for index, scores in zip(chunk, self._forward_chunk([encoded[i] for i in chunk], state)):
                    out[group[index]] = scores
        return [out[r] for r in requests]

    def _context_state(self, context: str):
        """The context read once (:class:`~llm_coop_envs.lm.engine.Read`: its ids, its keys and values, the
        hidden state at its last token), or None for no context; the last few are kept, so a source is read
        once however many calls score texts after it."""
        import torch

        from llm_coop_envs.lm.engine import Read

        if context in self._contexts:
            self._contexts.move_to_end(context)
            return self._contexts[context]
        ids = self._context_ids(context)
        if not ids:
            return None
        if self._engine is not None:
            state = self._engine.read(ids)
        else:
            with torch.inference_mode():
                output = self._model.base_model(input_ids=torch.tensor([ids], device=self.device), use_cache=True)
            state = Read(ids, cache_of(output), output.last_hidden_state[0, -1:])  # transformers' cache
        self.forward_tokens += len(ids)
        self._contexts[context] = state
        while len(self._contexts) > self._contexts_size:
            self._contexts.popitem(last=False)
        return state

    def _forward_chunk(self, encoded, state) -> list[TokenScores]:
        pad = self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None else 0
        self.forward_tokens += sum(len(p) + len(t) for p, t, _ in encoded)
        if self._engine is not None:
            values = self._engine.text_log_probs([p + t for p, t, _ in encoded], [len(p) for p, _, _ in encoded],
                                                 state, pad)
        else:
            values = self._transformers_log_probs(encoded, state, pad)
        return [TokenScores(tuple(v), tuple(ends[len(ends) - len(v):])) for v, (_, _, ends) in zip(values, encoded)]

    def _transformers_log_probs(self, encoded, state, pad: int) -> list[list[float]]:
        """What :meth:`~llm_coop_envs.lm.engine.Engine.text_log_probs` gives, through transformers' forward
        (a model the owned module does not cover)."""
        import torch

        lengths = [len(p) + len(t) for p, t, _ in encoded]
        width = max(max(lengths), 1)
        ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, (prefix, text, _) in enumerate(encoded):
            ids[row, : lengths[row]] = torch.tensor(prefix + text, dtype=torch.long)
            mask[row, : lengths[row]] = 1
        inputs = {"input_ids": ids.to(self.device)}
        if state is None:
            inputs["attention_mask"] = mask.to(self.device)
        else:
            # The context ran once; each chunk continues a copy of its cache, repeated for every row.
            cache = copy.deepcopy(state.cache)
            cache.batch_repeat_interleave(len(encoded))
            seen = torch.ones((len(encoded), len(state.ids)), dtype=torch.long)
            inputs.update(passing(cache), use_cache=True, attention_mask=torch.cat([seen, mask], 1).to(self.device))
        with torch.inference_mode():
            # The decoder's hidden states, then the output layer only where a text token is predicted:
            # full logits of a padded batch (rows x length x vocabulary) would take gigabytes. (`base_model`, not
            # `get_decoder()`: transformers 4.56's get_decoder returns None for Llama.)
            hidden = self._model.base_model(**inputs).last_hidden_state
            head = self._model.get_output_embeddings()
            results = []
            for row, (prefix, text, ends) in enumerate(encoded):
                # Token j of the row is predicted at position j - 1; the row's first token by the context's last
                # state (a row without a context cannot score its first token).
                rows = hidden[row, : lengths[row]]
                if state is not None:
                    rows = torch.cat([state.last, rows])  # rows[k] now predicts the row's token k
                    start, picked = len(prefix), rows[len(prefix) : lengths[row]]
                else:
                    start = max(len(prefix), 1)
                    picked = rows[start - 1 : lengths[row] - 1]
                targets = ids[row, start : lengths[row]].to(self.device)
                logits = head(picked).float()
                results.append(torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu().tolist())
        return results


def _chunks(encoded, max_tokens: int, context: int = 0, max_padding: float = 1.3) -> list[list[int]]:
    """Indices grouped by length so that each padded batch holds at most ``max_tokens`` tokens (a shared
    context of ``context`` tokens counts once per row: attention reads it for every row) and no row is
    padded to more than ``max_padding`` times its own length (padding is computed like text)."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]) + len(encoded[i][1]))
    chunks: list[list[int]] = []
    shortest = 0
    for index in order:
        own = len(encoded[index][0]) + len(encoded[index][1])
        length = context + own
        if chunks and length * (len(chunks[-1]) + 1) <= max_tokens and own <= max_padding * max(shortest, 1):
            chunks[-1].append(index)
        else:
            chunks.append([index])
            shortest = own
    return chunks


def _load_pretrained(name: str):
    """The model in fp32 and its tokenizer; the default one from the local cache only."""
    from llm_coop_envs.lm.load import pretrained

    try:
        return pretrained(name, pull=False)
    except FileNotFoundError as error:
        raise LanguageModelUnavailable(
            f"The -v3 writing rewards read the texts with a small language model that is not on this machine: "
            f"{error} (or pass language_model='<path or Hub id>')."
        ) from None
