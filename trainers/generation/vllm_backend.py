"""Generation with vLLM (GPU only, optional extra ``pip install 'llm-coop-envs[vllm]'``).

One vLLM engine per distinct base model, with LoRA enabled; each agent's adapter is served as a
``LoRARequest``. After every optimizer update :meth:`VLLMBackend.sync_weights` writes the adapters to
a scratch folder and bumps their ids, so vLLM loads the new weights on the next request (vLLM caches
adapters by id). Full fine-tuning (``lora_r: 0``) pushes the weights into the engine's model instead.

Importing this module without vLLM raises a clear ImportError; its tests skip without a GPU.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from pathlib import Path

from trainers.generation.base import Completion, GenerationRequest, cut_at_stop
from trainers.policy import Policies

try:
    import vllm
    from vllm.lora.request import LoRARequest
except ImportError as error:  # pragma: no cover - exercised only where vLLM is missing
    raise ImportError("backend=vllm needs vLLM and a CUDA GPU: pip install 'llm-coop-envs[vllm]'.") from error


class VLLMBackend:
    def __init__(self, policies: Policies, gpu_memory_utilization: float = 0.3, max_lora_rank: int = 64, **_: object):
        self.policies = policies
        self._scratch = Path(tempfile.mkdtemp(prefix="llm-coop-vllm-"))
        self._ids = itertools.count(1)
        self._engines: dict[int, vllm.LLM] = {}
        self._lora: dict[str, LoRARequest] = {}
        for slot in {id(s.model): s for s in policies.slots.values()}.values():
            base = slot.model.get_base_model() if slot.adapter is not None else slot.model
            self._engines[id(slot.model)] = vllm.LLM(
                model=base.config.name_or_path, enable_lora=slot.adapter is not None, max_lora_rank=max_lora_rank,
                gpu_memory_utilization=gpu_memory_utilization, dtype="bfloat16",
            )
        self.sync_weights()

    def sync_weights(self) -> None:
        for agent, slot in self.policies.slots.items():
            if slot.adapter is None:
                self._push_full_weights(slot)
                continue
            folder = self._scratch / f"{slot.adapter}-{next(self._ids)}"
            slot.model.save_pretrained(str(folder), selected_adapters=[slot.adapter])
            adapter_dir = folder / slot.adapter if (folder / slot.adapter).is_dir() else folder
            self._lora[agent] = LoRARequest(f"{slot.adapter}-{folder.name}", next(self._ids), str(adapter_dir))

    def _push_full_weights(self, slot) -> None:
        engine = self._engines[id(slot.model)]
        model = engine.llm_engine.model_executor.driver_worker.model_runner.model
        model.load_weights(slot.model.state_dict().items())

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        results: list[list[Completion]] = []
        for request in requests:  # vLLM batches internally across calls' prompts; keep it simple here
            slot = self.policies.slots[request.agent]
            prompt_ids = list(self.policies.prompt_ids(request.agent, request.observation))
            params = vllm.SamplingParams(
                n=request.num_samples, temperature=request.sampling.temperature, top_p=request.sampling.top_p,
                max_tokens=request.sampling.max_new_tokens, stop=list(request.sampling.stop) or None,
            )
            outputs = self._engines[id(slot.model)].generate(
                [{"prompt_token_ids": prompt_ids}], params, lora_request=self._lora.get(request.agent), use_tqdm=False
            )[0].outputs
            results.append([
                Completion(
                    text=cut_at_stop(o.text, request.sampling.stop), prompt_ids=tuple(prompt_ids),
                    completion_ids=tuple(o.token_ids), truncated=o.finish_reason == "length",
                )
                for o in outputs
            ])
        return results
