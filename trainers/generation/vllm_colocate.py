"""The in-process vLLM engine: one ``vllm.LLM`` with LoRA enabled, in the training process.

One ``LLM.generate`` call takes every request: a token-id prompt, its own ``SamplingParams`` and
its own ``LoRARequest`` per request. vLLM reads an adapter's folder the first time a request names
its id and keeps it in an LRU cache, so a refreshed adapter gets a new id and the old one is simply
never named again (the cache evicts it).
"""

from __future__ import annotations

from collections.abc import Sequence

from trainers.generation.vllm_backend import Job, Sample, ServedAdapter, stop_parameters

INSTALL_HINT = "backend=vllm with vllm_mode=colocate needs vLLM and a CUDA GPU: pip install 'llm-coop-envs[vllm]'."


class ColocatedEngine:
    def __init__(
        self, model: str, dtype: str = "bfloat16", gpu_memory_fraction: float = 0.3, max_loras: int = 2,
        max_lora_rank: int = 16, **engine_options,
    ) -> None:
        try:
            import vllm
            from vllm.lora.request import LoRARequest
        except ImportError as error:
            raise ImportError(INSTALL_HINT) from error
        self._vllm, self._lora_request = vllm, LoRARequest
        self.llm = vllm.LLM(
            model=model, dtype=dtype, enable_lora=True, max_loras=max_loras, max_lora_rank=max_lora_rank,
            gpu_memory_utilization=gpu_memory_fraction,
            logprobs_mode="processed_logprobs",  # after temperature and top-p: the sampling distribution
            **engine_options,
        )

    def load(self, adapter: ServedAdapter) -> None:
        """Nothing to do now: vLLM loads the folder on the first request that names the adapter."""

    def unload(self, adapter: ServedAdapter) -> None:
        """Nothing to do: the old id is never requested again and vLLM's LRU cache evicts it."""

    def generate(self, jobs: Sequence[Job]) -> list[list[Sample]]:
        prompts = [{"prompt_token_ids": list(job.prompt_ids)} for job in jobs]
        params = [self.sampling_params(job) for job in jobs]
        loras = [self._lora_request(job.adapter.name, job.adapter.int_id, str(job.adapter.path)) for job in jobs]
        outputs = self.llm.generate(prompts, params, lora_request=loras, use_tqdm=False)
        return [[_sample(o) for o in output.outputs] for output in outputs]

    def sampling_params(self, job: Job):
        sampling = job.sampling
        return self._vllm.SamplingParams(
            n=job.num_samples, temperature=sampling.temperature, top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens, **stop_parameters(sampling),
            logprobs=0,  # the sampled token's log-probability only
            seed=job.seed,
        )

    def close(self) -> None:
        self.llm = None


def _sample(output) -> Sample:
    token_ids = tuple(int(t) for t in output.token_ids)
    return Sample(output.text, token_ids, _sampled_logprobs(output.logprobs, token_ids), output.finish_reason)


def _sampled_logprobs(steps, token_ids: tuple[int, ...]) -> tuple[float, ...] | None:
    """vLLM gives one ``{token_id: Logprob}`` mapping per position; keep the sampled token's value."""
    if steps is None or len(steps) != len(token_ids):
        return None
    values = []
    for step, token in zip(steps, token_ids):
        entry = step.get(token) if step is not None else None
        if entry is None:
            return None
        values.append(float(entry.logprob))
    return tuple(values)
