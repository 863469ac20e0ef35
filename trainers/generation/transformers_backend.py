"""Generation with ``transformers.generate``: all agents that share a base model in one batched call.

Rows are grouped by (model, sampling settings). Within a group, each request's prompt is repeated
``num_samples`` times, left-padded, and generated in one call with the KV cache on; when the rows
belong to different LoRA adapters of one peft model, peft's ``adapter_names=`` applies the right
adapter to each row. Generation runs under ``torch.no_grad`` and (by default) bf16 autocast.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import torch

from trainers.config import SamplingConfig
from trainers.generation.base import Completion, GenerationRequest, cut_at_stop
from trainers.policy import Policies, pad_token_id


class TransformersBackend:
    """The default backend (CPU and GPU)."""

    def __init__(self, policies: Policies, dtype: str = "bfloat16", max_batch_rows: int = 64) -> None:
        self.policies = policies
        self.dtype = dtype
        self.max_batch_rows = max_batch_rows

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
        tokenizer, model, device = slot.tokenizer, slot.model, self.policies.device
        prompts = [self.policies.prompt_ids(r.agent, r.observation) for r in requests for _ in range(r.num_samples)]
        adapters = [self.policies.slots[r.agent].adapter for r in requests for _ in range(r.num_samples)]
        pad = pad_token_id(tokenizer)
        width = max(len(p) for p in prompts)
        input_ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
        kwargs = self._sampling_kwargs(sampling, tokenizer)
        kwargs.update(self._adapter_kwargs(slot, adapters))
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=self.dtype == "bfloat16"):
            output = model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
        new_tokens = output[:, width:].tolist()
        completions = [
            _completion(prompt, tokens, tokenizer, sampling) for prompt, tokens in zip(prompts, new_tokens)
        ]
        grouped, start = [], 0
        for request in requests:
            grouped.append(completions[start : start + request.num_samples])
            start += request.num_samples
        return grouped

    def _adapter_kwargs(self, slot, adapters: list[str | None]) -> dict:
        distinct = set(adapters)
        if distinct == {None}:
            return {}
        if len(distinct) == 1:
            slot.model.set_adapter(adapters[0])
            return {}
        return {"adapter_names": [a if a is not None else "__base__" for a in adapters]}

    @staticmethod
    def _sampling_kwargs(sampling: SamplingConfig, tokenizer) -> dict:
        kwargs = {
            "max_new_tokens": sampling.max_new_tokens,
            "pad_token_id": pad_token_id(tokenizer),
            "eos_token_id": tokenizer.eos_token_id,
            "use_cache": True,
        }
        if sampling.temperature > 0:
            # top_k=0: sample from the full distribution the loss scores (transformers defaults to 50).
            kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if sampling.stop:
            kwargs.update(stop_strings=list(sampling.stop), tokenizer=tokenizer)
        return kwargs


def _completion(prompt: Sequence[int], tokens: list[int], tokenizer, sampling: SamplingConfig) -> Completion:
    """Keep the tokens up to and including the first end-of-sequence token; decode; cut at stop strings."""
    eos = tokenizer.eos_token_id
    eos_ids = set(eos) if isinstance(eos, list) else {eos}
    end = next((i + 1 for i, t in enumerate(tokens) if t in eos_ids), None)
    kept = tokens[:end] if end is not None else list(tokens)
    if end is None and sampling.stop:
        # A row stopped by a stop string is padded to the batch's length afterwards: drop the padding.
        while kept and kept[-1] == pad_token_id(tokenizer):
            kept.pop()
    text = cut_at_stop(tokenizer.decode(kept, skip_special_tokens=True), sampling.stop)
    return Completion(text=text, prompt_ids=tuple(prompt), completion_ids=tuple(kept), truncated=end is None)


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
