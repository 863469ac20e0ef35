"""Generation with vLLM: the shared base model served once, one LoRA adapter per trained key.

Every agent's prompts carry its own adapter, and the requests of all agents go to vLLM together, so
one engine batches both agents (vLLM's multi-LoRA serving). Two engines speak to vLLM:

* ``colocate`` (:mod:`trainers.generation.vllm_colocate`): a ``vllm.LLM`` in this process;
* ``server`` (:mod:`trainers.generation.vllm_server`): a ``vllm serve --enable-lora`` process reached
  over HTTP, so the generation GPUs can differ from the training GPUs.

After every optimizer update :meth:`VLLMBackend.sync_weights` writes each adapter to a fresh folder
under a new name and a new integer id. vLLM caches adapters by id (and the server by name), so a
reused id would keep serving the old weights; the previous version is then unloaded and its folder
removed. Full fine-tuning has no adapter to refresh and is refused (``backend: transformers``).

The per-token log-probabilities come from vLLM after temperature and top-p (``processed_logprobs``),
the distribution :mod:`llm_coop_envs.lm.distribution` describes; the loss still rescores every
reply with the trained model, so they serve as a check (``agent/<name>/sampler_logp_gap``, which
warns above ``sampler_logp_gap_warn``) and, with ``importance_cap``, as the denominator of truncated
importance weights. Each request carries its own ``seed`` (drawn from torch's per-rank generator).
LoRA runs in bfloat16 or float16 (float32 is mapped to bfloat16 with a warning); colocated engines
are refused in multi-process launches (:func:`check_one_engine_per_process`).

What has not run on a GPU (tested on the CPU with vLLM's objects replaced at the import line only):
the dtype vLLM accepts with LoRA, the per-request seed, the size of the log-prob gap.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import tempfile
import uuid
import warnings
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import torch

from trainers.config import SamplingConfig
from trainers.generation.base import VLLM_CODE_STOP, Completion, GenerationRequest, cut_reply
from trainers.policy import Policies, save_adapter

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The values vLLM accepts for ``max_lora_rank``."""


@dataclasses.dataclass(frozen=True)
class ServedAdapter:
    """One version of one key's adapter as vLLM knows it."""

    name: str
    int_id: int
    path: Path


@dataclasses.dataclass(frozen=True)
class Job:
    """One request as the engines see it: token ids in, ``num_samples`` samples out."""

    adapter: ServedAdapter
    prompt_ids: tuple[int, ...]
    num_samples: int
    sampling: SamplingConfig
    seed: int | None = None
    """vLLM's per-request ``seed``: the request's samples are then a function of it alone, whatever else
    the engine batches with them."""


@dataclasses.dataclass(frozen=True)
class Sample:
    """What vLLM returned for one sample."""

    text: str
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None
    finish_reason: str | None


class Engine(Protocol):
    def load(self, adapter: ServedAdapter) -> None: ...
    def unload(self, adapter: ServedAdapter) -> None: ...
    def generate(self, jobs: Sequence[Job]) -> list[list[Sample]]: ...
    def close(self) -> None: ...


class VLLMBackend:
    """The ``GenerationBackend`` over vLLM (see the module docstring)."""

    def __init__(
        self, policies: Policies, mode: str = "colocate", url: str | None = None, dtype: str = "bfloat16",
        gpu_memory_fraction: float = 0.3, max_loras: int = 2, adapter_dir: str | None = None,
        timeout_s: float = 300.0, model: str | None = None,
    ) -> None:
        self.policies = policies
        base = served_base_model(policies, model)
        dtype = lora_dtype(dtype)
        check_one_engine_per_process(mode)
        if len(policies.keys) > max_loras:
            raise ValueError(f"{len(policies.keys)} adapters are trained but vllm_max_loras={max_loras}: "
                             f"raise vllm_max_loras so one batch can hold every agent's adapter.")
        self._folder = _fresh_folder(adapter_dir)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._folder, True)
        self._tag = uuid.uuid4().hex[:8]  # several trainers may share one server: names must not collide
        self._ids = itertools.count(1)
        self._served: dict[str, ServedAdapter] = {}
        self.engine = _make_engine(mode, url, base, dtype, gpu_memory_fraction, max_loras, max_lora_rank(policies),
                                   timeout_s)
        self.sync_weights()

    @property
    def adapter_folder(self) -> Path:
        return self._folder

    def served(self, agent: str) -> ServedAdapter:
        """The adapter version the agent's requests name now."""
        return self._served[self.policies.slots[agent].key]

    def sync_weights(self) -> None:
        """Serve the current weights: a new adapter version per key, then drop the previous one."""
        for key in self.policies.keys:
            slot = self.policies.slot_of_key(key)
            int_id = next(self._ids)
            name = f"{key}-{self._tag}-v{int_id}"
            adapter = ServedAdapter(name, int_id, self._folder / name)
            save_adapter(slot.model, slot.adapter, adapter.path)
            self.engine.load(adapter)
            previous = self._served.get(key)
            self._served[key] = adapter
            if previous is not None:
                self.engine.unload(previous)
                shutil.rmtree(previous.path, ignore_errors=True)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        if not requests:
            return []
        base = request_seed_base()
        jobs = [
            Job(self.served(r.agent), self.policies.prompt_ids(r.agent, r.observation), r.num_samples, r.sampling,
                seed=(base + index) % SEED_RANGE)
            for index, r in enumerate(requests)
        ]
        outputs = self.engine.generate(jobs)
        if len(outputs) != len(jobs):
            raise RuntimeError(f"vLLM answered {len(outputs)} of {len(jobs)} requests.")
        for request, samples in zip(requests, outputs):
            self._check_vocabulary(request.agent, samples)
        return [[_completion(job, sample) for sample in samples] for job, samples in zip(jobs, outputs)]

    def _check_vocabulary(self, agent: str, samples: Sequence[Sample]) -> None:
        """Token ids the model cannot embed would only fail later, deep in the loss: refuse them here."""
        vocabulary = self.policies.slots[agent].model.get_input_embeddings().num_embeddings
        for sample in samples:
            bad = [t for t in sample.token_ids if not 0 <= t < vocabulary]
            if bad:
                raise RuntimeError(f"vLLM returned token ids {bad[:5]} outside {agent}'s vocabulary of {vocabulary}: "
                                   "is it serving another base model than the trainer's?")

    def close(self) -> None:
        """Unload the adapters, stop the engine and remove the adapter folders."""
        for adapter in self._served.values():
            self.engine.unload(adapter)
        self._served.clear()
        self.engine.close()
        self._cleanup()


SEED_RANGE = 2**31 - 1
LORA_DTYPES = ("bfloat16", "float16")
"""The dtypes vLLM's LoRA kernels run in (its ``--lora-dtype`` offers no float32; float32 fails in the kernels)."""


def lora_dtype(dtype: str) -> str:
    """The engine's dtype: ``float32`` (the trainer's CPU default) becomes ``bfloat16``, with a warning,
    since vLLM's LoRA kernels do not run in float32. The trainer still scores in ``train_dtype``; the
    difference shows in ``agent/<name>/sampler_logp_gap``."""
    if dtype in LORA_DTYPES:
        return dtype
    if dtype == "float32":
        warnings.warn("backend=vllm: vLLM's LoRA kernels do not run in float32, so the engine runs in bfloat16 "
                      "(set generation_dtype=bfloat16 to say so; agent/<name>/sampler_logp_gap shows the "
                      "difference to the trainer's log-probs).", UserWarning, stacklevel=3)
        return "bfloat16"
    raise ValueError(f"backend=vllm runs LoRA in {' or '.join(LORA_DTYPES)}, not {dtype!r}: set generation_dtype.")


def check_one_engine_per_process(mode: str) -> None:
    """Refuse colocated engines in a multi-process launch: each ``vllm.LLM`` would take GPU 0 and start
    inside Accelerate's process group; vLLM's supported way (its ``external_launcher`` executor, one
    engine per rank on its own device) has not run here on GPUs yet."""
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    if mode == "colocate" and processes > 1:
        raise NotImplementedError(
            f"backend=vllm with vllm_mode=colocate runs in one process only (this launch has {processes}): "
            "start `vllm serve --enable-lora` and use vllm_mode=server with vllm_url (every process sends its "
            "requests there), or train in one process (docs/generation.md)."
        )


def request_seed_base() -> int:
    """A base for the seeds of one ``generate`` call, drawn from torch's generator: each process has
    its own (the trainer seeds it per rank) and checkpoints restore it, so a resumed run asks vLLM for
    the same samples as an uninterrupted one."""
    return int(torch.randint(0, SEED_RANGE, ()).item())


def served_base_model(policies: Policies, name: str | None = None) -> str:
    """The one base model every adapter sits on (vLLM serves one base per engine); ``name`` overrides
    the model's own ``name_or_path`` (e.g. a local copy of it)."""
    names = set()
    for key in policies.keys:
        slot = policies.slot_of_key(key)
        if slot.adapter is None:
            raise ValueError("backend=vllm serves LoRA adapters; full fine-tuning (lora_r=0) needs "
                             "backend=transformers.")
        names.add(slot.model.get_base_model().config.name_or_path)
    if len(names) != 1:
        raise ValueError(f"backend=vllm serves one base model, but the agents use {sorted(names)}: "
                         "heterogeneous agents need backend=transformers.")
    name = name or names.pop()
    if not name:
        raise ValueError("The base model has no name or path for vLLM to load (config.name_or_path is empty); "
                         "pass model=<hub id or folder>.")
    return name


def max_lora_rank(policies: Policies) -> int:
    """The smallest ``max_lora_rank`` vLLM accepts that holds every adapter's rank."""
    slots = [policies.slot_of_key(key) for key in policies.keys]
    rank = max(slot.model.peft_config[slot.adapter].r for slot in slots)
    fitting = [r for r in VLLM_LORA_RANKS if r >= rank]
    if not fitting:
        raise ValueError(f"LoRA rank {rank} is above vLLM's largest max_lora_rank {VLLM_LORA_RANKS[-1]}.")
    return fitting[0]


def _make_engine(mode, url, base, dtype, gpu_memory_fraction, max_loras, rank, timeout_s) -> Engine:
    if mode == "colocate":
        from trainers.generation.vllm_colocate import ColocatedEngine

        return ColocatedEngine(base, dtype=dtype, gpu_memory_fraction=gpu_memory_fraction, max_loras=max_loras,
                               max_lora_rank=rank)
    if mode == "server":
        if not url:
            raise ValueError("vllm_mode=server needs vllm_url, the address of `vllm serve`.")
        from trainers.generation.vllm_server import ServerEngine

        return ServerEngine(url, timeout_s=timeout_s)
    raise ValueError(f"vllm_mode must be 'colocate' or 'server', got {mode!r}.")


def _fresh_folder(parent: str | None) -> Path:
    """A private temporary folder, or one under ``parent`` that a server run by another user can read."""
    if parent is None:
        return Path(tempfile.mkdtemp(prefix="llm-coop-vllm-")).resolve()
    Path(parent).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="llm-coop-vllm-", dir=parent)).resolve()
    folder.chmod(0o755)  # mkdtemp makes it 0700; adapter weights are not secret
    return folder


def stop_parameters(sampling) -> dict:
    """vLLM's documented ``stop`` and ``include_stop_str_in_output`` for a ``SamplingConfig``.

    ``stop_after_code`` becomes the stop string :data:`VLLM_CODE_STOP`, kept in the output so the
    reply keeps its closing fence; the caller's own stop strings are then cut by :func:`cut_reply`."""
    stop = [*sampling.stop, VLLM_CODE_STOP] if sampling.stop_after_code else list(sampling.stop)
    return {"stop": stop or None, "include_stop_str_in_output": bool(sampling.stop_after_code)}


def _completion(job: Job, sample: Sample) -> Completion:
    logprobs = sample.logprobs
    if logprobs is not None and len(logprobs) != len(sample.token_ids):
        logprobs = None  # a partial list would misalign with the tokens: report none
    return Completion(
        text=cut_reply(sample.text, job.sampling.stop, job.sampling.stop_after_code), prompt_ids=job.prompt_ids,
        completion_ids=sample.token_ids, truncated=sample.finish_reason == "length", logprobs=logprobs,
    )
