"""Generation with a transformers model: all agents that share a base model in one batched loop.

Rows are grouped by (model, sampling settings). Within a group, each distinct (agent, prompt) is
prefilled once and its KV cache copied to its ``num_samples`` rows; the decode steps then run every
agent's rows together, each row through its own LoRA adapter. A model the project's own module
covers (a Llama, SmolLM2 among them, with plain LoRA adapters: :func:`llm_coop_envs.lm.load.unsupported`)
runs on the engine (:mod:`llm_coop_envs.lm.engine`: per-row adapters built in, fp32 weights on a CPU
packed for fast products); any other runs through transformers' own forward
(:mod:`trainers.generation.decode`, rows routed to their adapters by peft's ``adapter_names``).
Generation runs under ``torch.no_grad`` and the configured autocast dtype.
"""

from __future__ import annotations

import contextlib
import functools
from collections import defaultdict
from collections.abc import Callable, Sequence

import torch

from llm_coop_envs.versions import in_tested_range
from trainers.config import SamplingConfig
from trainers.generation.base import Completion, GenerationRequest, code_block_end, cut_at_stop, cut_reply
from llm_coop_envs.lm.engine import Engine, Sampling
from llm_coop_envs.lm.load import owned_model
from trainers.generation.decode import DecodeSettings, decode, stops
from trainers.policy import Policies, pad_token_id


class TransformersBackend:
    """The default backend (CPU and GPU)."""

    generates_with_trained_modules = True
    """Generation reads the trained modules (gathered by the trainer around each rollout): nothing to sync."""

    def __init__(
        self, policies: Policies, dtype: str = "bfloat16", max_batch_rows: int = 128, min_new_tokens: int = 0
    ) -> None:
        self.policies = policies
        self.dtype = dtype
        self.max_batch_rows = max_batch_rows
        """Rows decoded together; more run one batch after another (the KV cache grows with the rows:
        128 rows of 500 tokens take about 3 GB for the 135M model)."""
        self.min_new_tokens = min_new_tokens
        """Forbid end-of-sequence before this many tokens (benchmarks fix the work this way; 0 in training)."""
        self.decode_progress: Callable[[int, int], None] | None = None
        """Called after each decode step with (step, rows still running): progress bars."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        buckets: dict[tuple[int, SamplingConfig], list[int]] = defaultdict(list)
        for index, request in enumerate(requests):
            buckets[(id(self.policies.slots[request.agent].model), request.sampling)].append(index)
        results: list[list[Completion]] = [[] for _ in requests]
        for (_, sampling), indices in buckets.items():
            for chunk in _chunks(indices, requests, self.max_batch_rows):
                for index, completions in zip(chunk, self._generate_bucket([requests[i] for i in chunk], sampling)):
                    results[index] = completions
        return results

    def sync_weights(self) -> None:
        """Nothing to do: generation uses the trained modules themselves."""

    @torch.no_grad()
    def _generate_bucket(self, requests: Sequence[GenerationRequest], sampling: SamplingConfig) -> list[list[Completion]]:
        slot = self.policies.slots[requests[0].agent]
        tokenizer, model = slot.tokenizer, slot.model
        distinct: dict[tuple[str | None, tuple[int, ...]], int] = {}
        prompt_of_row, row_prompts = [], []
        for request in requests:
            prompt = self.policies.prompt_ids(request.agent, request.observation)
            key = (self.policies.slots[request.agent].adapter, prompt)
            index = distinct.setdefault(key, len(distinct))
            prompt_of_row += [index] * request.num_samples
            row_prompts += [prompt] * request.num_samples
        adapters = [adapter for adapter, _ in distinct]
        prompts = [prompt for _, prompt in distinct]
        settings = self._settings(sampling, tokenizer, model)
        decode_text = functools.partial(tokenizer.decode, skip_special_tokens=True)
        bf16 = self.dtype == "bfloat16"
        with torch.autocast(self.policies.device.type, dtype=torch.bfloat16, enabled=bf16):
            owned = owned_model(model)
            if owned is not None:
                owned.eval()
                slots = [-1 if a is None else owned.adapter_names.index(a) for a in adapters]
                new_tokens, new_logprobs = Engine(owned, packed=not bf16).sample(
                    prompts, prompt_of_row, _sampling(settings), slots, _stop_rule(settings, decode_text),
                    self.decode_progress)
            else:
                new_tokens, new_logprobs = decode(
                    model, prompts, prompt_of_row, settings,
                    lambda rows: _adapter_scope(model, [adapters[i] for i in rows]),
                    decode_text=decode_text, progress=self.decode_progress)
        eos_ids = end_token_ids(tokenizer, model)
        completions = [
            _completion(prompt, tokens, logprobs, tokenizer, sampling, eos_ids)
            for prompt, tokens, logprobs in zip(row_prompts, new_tokens, new_logprobs)
        ]
        grouped, start = [], 0
        for request in requests:
            grouped.append(completions[start : start + request.num_samples])
            start += request.num_samples
        return grouped

    def _settings(self, sampling: SamplingConfig, tokenizer, model) -> DecodeSettings:
        return DecodeSettings(
            max_new_tokens=sampling.max_new_tokens, temperature=sampling.temperature, top_p=sampling.top_p,
            eos_ids=end_token_ids(tokenizer, model), pad_id=pad_token_id(tokenizer), stop=tuple(sampling.stop),
            stop_after_code=sampling.stop_after_code, min_new_tokens=self.min_new_tokens,
        )


def _sampling(settings: DecodeSettings) -> Sampling:
    return Sampling(max_new_tokens=settings.max_new_tokens, temperature=settings.temperature, top_p=settings.top_p,
                    eos_ids=settings.eos_ids, pad_id=settings.pad_id, min_new_tokens=settings.min_new_tokens)


def _stop_rule(settings: DecodeSettings, decode_text):
    """The engine's stop callback: a row ends once its text holds a stop string or a closed code block."""
    if not (settings.stop or settings.stop_after_code):
        return None
    return lambda running, tokens: [stops(decode_text(row), settings) for row in tokens]


def _adapter_scope(model: torch.nn.Module, adapters: list[str | None]) -> contextlib.AbstractContextManager:
    """Route each row to its adapter through peft's ``adapter_names``."""
    if set(adapters) == {None}:
        return model.disable_adapter() if hasattr(model, "disable_adapter") else contextlib.nullcontext()
    names = [a if a is not None else "__base__" for a in adapters]
    return _peft_adapter_names(model, names)


@contextlib.contextmanager
def _peft_adapter_names(model: torch.nn.Module, names: list[str]):
    """Row ``i`` of every forward within the block uses adapter ``names[i]``, through peft's private
    ``_enable_peft_forward_hooks`` inside peft's declared range, otherwise through the public
    ``adapter_names=`` keyword of the peft model's forward (the same hooks, entered per call)."""
    hooks = getattr(model, "_enable_peft_forward_hooks", None)
    if in_tested_range("peft") and hooks is not None:
        with hooks(adapter_names=names):
            yield
        return
    model.forward = functools.partial(type(model).forward, model, adapter_names=names)
    try:
        yield
    finally:
        model.__dict__.pop("forward", None)


def end_token_ids(tokenizer, model: torch.nn.Module) -> frozenset[int]:
    """Every token that ends a reply: the tokenizer's end token and each end token of the model's
    generation config (chat models often list several there, e.g. end-of-turn and end-of-text)."""
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    for source in (tokenizer.eos_token_id, getattr(config, "eos_token_id", None)):
        if isinstance(source, (list, tuple)):
            ids.update(int(i) for i in source)
        elif source is not None:
            ids.add(int(source))
    return frozenset(ids)


def _completion(
    prompt: Sequence[int], tokens: list[int], logprobs: list[float], tokenizer, sampling: SamplingConfig,
    eos_ids: frozenset[int],
) -> Completion:
    """Keep the tokens up to and including the first end-of-sequence token; decode; cut at stop strings
    and (``stop_after_code``) after the closing code fence."""
    # decode() returns each row's own tokens only (a finished row gets no padding), so nothing is
    # stripped here: a pad id at the end is a token the policy sampled, and its log-prob is in ``logprobs``.
    end = next((i + 1 for i, t in enumerate(tokens) if t in eos_ids), None)
    kept = tokens[:end] if end is not None else list(tokens)
    stops = bool(sampling.stop) or sampling.stop_after_code
    decoded = tokenizer.decode(kept, skip_special_tokens=True)
    text = cut_reply(decoded, sampling.stop, sampling.stop_after_code)
    stopped = end is None and stops and _stopped_early(decoded, sampling)
    return Completion(
        text=text, prompt_ids=tuple(prompt), completion_ids=tuple(kept), truncated=end is None and not stopped,
        logprobs=tuple(logprobs[: len(kept)]),
    )


def _stopped_early(text: str, sampling: SamplingConfig) -> bool:
    """The reply ended at a stop string or its closing fence, not at ``max_new_tokens``."""
    return cut_at_stop(text, sampling.stop) != text or (sampling.stop_after_code and code_block_end(text) is not None)


def _chunks(indices: list[int], requests: Sequence[GenerationRequest], max_rows: int) -> list[list[int]]:
    chunks, current, rows = [], [], 0
    for index in indices:
        n = requests[index].num_samples
        if current and rows + n > max_rows:
            chunks.append(current)
            current, rows = [], 0
        current.append(index)
        rows += n
    return chunks + ([current] if current else [])
