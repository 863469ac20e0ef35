"""Many processes (and nodes) through Accelerate: data parallel over problems, DDP for the gradients.

Launch with ``accelerate launch`` (or ``torchrun``): each process builds the same policies from the
same seed, rolls out its own problems, and trains through :class:`torch.nn.parallel.DistributedDataParallel`
wrappers that :meth:`accelerate.Accelerator.prepare` builds, so gradients are all-reduced in buckets
and the replicas stay identical. Without a GPU the processes join over gloo; on GPUs over NCCL. A
single process gets no wrapper and no collective at all.

The shared-base layout (one base model, one LoRA adapter per agent, one optimizer per agent) gets
**one DDP wrapper per agent** over the same base model, each built while only that agent's adapter
requires grad, so each wrapper owns exactly that agent's LoRA tensors (DDP registers the parameters
that require grad when it is built). Why not one wrapper with ``find_unused_parameters=True``: every
backward touches one agent's adapter only, so that wrapper would search the whole graph for unused
tensors and all-reduce the other agents' zero buckets on every backward; per-agent wrappers reduce
only what the backward touched, with no graph search.

With an FSDP config (``fsdp_version: 2``) each trained model is sharded instead, by
:mod:`trainers.fsdp`, which gathers the weights around every pass (see there why). DeepSpeed is
refused with the reason (:func:`check_engine`).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from trainers import fsdp


@dataclasses.dataclass(frozen=True)
class Distributed:
    """This process's place among the training processes (read from Accelerate's state)."""

    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def of(cls, accelerator: Any) -> Distributed:
        return cls(rank=accelerator.process_index, world_size=accelerator.num_processes)

    def gather_objects(self, value: Any) -> list[Any]:
        """Every rank's ``value``, in rank order (on every rank): one collective."""
        if self.world_size <= 1:
            return [value]
        from accelerate.utils import gather_object

        return gather_object([value])

    def sum_counts(self, value: Mapping[Any, Any]) -> dict[Any, Any]:
        """Every rank's ``value`` (nested mappings of numbers) summed key by key, on every rank: one
        collective; the value itself on one process."""
        if self.world_size <= 1:
            return dict(value)
        return summed(self.gather_objects(value))


def summed(values: Sequence[Mapping[Any, Any]]) -> dict[Any, Any]:
    """Nested mappings of numbers added key by key (a key missing from one mapping counts as 0)."""
    total: dict[Any, Any] = {}
    for value in values:
        for key, item in value.items():
            if isinstance(item, Mapping):
                total[key] = summed([total.get(key, {}), item])
            else:
                total[key] = total.get(key, 0) + item
    return total


def make_accelerator(device: str):
    """The Accelerator of a training run: CPU processes over gloo when ``device`` resolves to the CPU
    (Accelerate only forms a multi-CPU group when told so), GPU ``LOCAL_RANK`` otherwise."""
    from accelerate import Accelerator
    from accelerate.utils import DistributedDataParallelKwargs

    cpu = device == "cpu" or (device == "auto" and not torch.cuda.is_available())
    # The models' buffers (rotary tables) never change: broadcasting them before every forward is waste.
    ddp = DistributedDataParallelKwargs(broadcast_buffers=False)
    check_engine(None)  # before Accelerate, which would first ask for DeepSpeed to be installed
    accelerator = Accelerator(cpu=cpu, kwargs_handlers=[ddp])
    check_engine(accelerator)
    if accelerator.mixed_precision != "no":
        # The trainer sets its precision itself (train_dtype, generation_dtype: autocast, fp32 weights).
        # Accelerate's would wrap every forward of the prepared models, generation included, in its
        # own autocast (and, for fp16, a loss scaler the trainer's clipping does not know). It stays
        # off, also when this process's Accelerate state was set up earlier with another precision
        # (by another library's trainer, say): that state cannot be changed once made.
        warnings.warn(
            f"Accelerate's mixed precision {accelerator.mixed_precision!r} is not used by this trainer: "
            "set train_dtype and generation_dtype (e.g. bfloat16) instead.", stacklevel=3,
        )
        accelerator.native_amp, accelerator.scaler = False, None
    return accelerator


def end_process_group(accelerator: Any) -> None:
    """Leave the run's process group, on every rank, after its last collective (a barrier first), while
    the interpreter is fully alive; nothing to do on one process.

    Why: a process that exits with its gloo process group still alive aborts at random with SIGABRT
    ("terminate called without an active exception"): gloo's worker threads still hold the work
    objects of earlier asynchronous collectives (FSDP2's gathers and reduce-scatters), whose tensors
    are released during interpreter shutdown, when they can no longer take the GIL. Destroying the
    group joins those threads and frees the work first. Under NCCL the same call avoids torch's
    "process group has NOT been destroyed" warning and a rank leaving while another still waits."""
    import torch.distributed as dist

    if accelerator.num_processes <= 1 or not dist.is_available() or not dist.is_initialized():
        return
    accelerator.wait_for_everyone()
    accelerator.end_training()  # Accelerate's own teardown: trackers, then destroy_process_group()


def check_engine(accelerator: Any) -> None:
    """Refuse engines the trainer does not drive, with a message that says why and what to do
    (``accelerator`` None: only what the launch asked for)."""
    kind = str(accelerator.distributed_type).split(".")[-1] if accelerator is not None else ""
    if kind == "DEEPSPEED" or fsdp.env_flag("ACCELERATE_USE_DEEPSPEED"):
        raise NotImplementedError(
            "Accelerate is configured for DeepSpeed, which the trainer does not drive: a DeepSpeed engine "
            "owns one model and one optimizer (Accelerate's backward drives the first engine prepared) and "
            "steps them itself after a fixed number of backward passes (gradient_accumulation_steps), while "
            "the trainer keeps one optimizer per agent (several over one shared base with lora_per_agent) "
            "and backwards a number of micro-batches that varies from step to step and from process to "
            "process. For sharded weights, gradients and optimizer states use FSDP2: "
            "configs/accelerate/fsdp2_lora.yaml or fsdp2_full.yaml (docs/scaling.md)."
        )
    if kind == "MEGATRON_LM":
        raise NotImplementedError("Megatron-LM is not supported: use DDP or FSDP2 (docs/scaling.md).")
    if accelerator is not None and fsdp.FsdpSettings.from_env() is not None:  # refuses FSDP version 1
        fsdp.warn_unapplied()


def fsdp_settings() -> fsdp.FsdpSettings | None:
    """The FSDP2 settings of this launch, or None when the launch did not ask for FSDP."""
    return fsdp.FsdpSettings.from_env()


def prepare(accelerator: Any, policies: Any, make_optimizer: Callable[[str], torch.optim.Optimizer]):
    """Wrap (DDP) or shard (FSDP2) each key's trained module and build its optimizer with
    ``make_optimizer(key)``; returns ``({key: module}, {key: optimizer})``.

    DDP: one wrapper per key, built while only that key's weights require grad (module docstring).
    FSDP2: each distinct model sharded once (a shared base once for all its agents), then the
    optimizers built over the sharded parameters; with one process nothing is sharded, but the
    optimizers stay out of Accelerate so that checkpoints keep the FSDP layout (trainers.checkpoint)."""
    settings = fsdp_settings()
    if settings is None:
        modules, prepared = {}, {}
        for key in policies.keys:
            policies.activate(policies.agents_of(key)[0])
            modules[key], prepared[key] = accelerator.prepare(policies.slot_of_key(key).model, make_optimizer(key))
        return modules, prepared
    if accelerator.num_processes > 1:
        for model in dict.fromkeys(policies.slot_of_key(key).model for key in policies.keys):
            fsdp.shard(model, settings, policies.device.type)
    return ({key: policies.slot_of_key(key).model for key in policies.keys},
            {key: make_optimizer(key) for key in policies.keys})


def prepare_owned(accelerator: Any, algorithm: Any, build_modules: Callable[[Any], Any] | None, policies: Any):
    """The algorithm's own modules (its ``build_modules``) and their optimizers, on the policies' device and
    prepared like the policies' (a DDP wrapper each with many processes): ``({name: module}, {name: optimizer})``.
    An algorithm without ``build_modules`` (``None``) owns nothing."""
    owned = dict(build_modules(policies)) if build_modules is not None else {}
    if owned and fsdp_settings() is not None:
        raise NotImplementedError(
            f"The algorithm owns modules ({sorted(owned)}), which the trainer does not prepare under FSDP: "
            "use DDP (configs/accelerate/ddp_*.yaml) for this algorithm."
        )
    modules, optimizers = {}, {}
    for name, module in owned.items():
        module.to(policies.device)
        optimizer = algorithm.build_optimizer(name, module)
        modules[name], optimizers[name] = accelerator.prepare(module, optimizer)
    return modules, optimizers


@contextmanager
def gathered_weights(policies: Any) -> Iterator[None]:
    """The full weights of sharded models inside (generation, evaluation, export); nothing to do
    without FSDP. Every process enters it at the same point (it is a collective under FSDP)."""
    with fsdp.gathered(slot.model for slot in policies.slots.values()):
        yield


def sync_backend(backend: Any, policies: Any) -> None:
    """Hand the updated weights to the generation backend (gathered first when they are sharded,
    unless the backend generates through the trained modules themselves and gathers per rollout)."""
    if getattr(backend, "generates_with_trained_modules", False):
        backend.sync_weights()
        return
    with gathered_weights(policies):
        backend.sync_weights()


@contextmanager
def local_gradients(accelerator: Any, module: torch.nn.Module) -> Iterator[None]:
    """Backward passes inside accumulate gradients locally (no all-reduce). A sharded module is
    gathered on entry and stays gathered until :func:`synchronize_gradients`. With one process there
    is nothing to hold back (and a one-process FSDP launch leaves the model unsharded, where
    Accelerate's ``no_sync`` would call a method only sharded models have)."""
    if accelerator.num_processes <= 1:
        yield
        return
    if fsdp.is_sharded(module):
        fsdp.unshard(module, accumulate=True)
        yield
        return
    with accelerator.no_sync(module):
        yield


def synchronize_gradients(accelerator: Any, module: torch.nn.Module, policies: Any, key: str) -> None:
    """Average the gradients accumulated under :func:`local_gradients` over the processes, on every
    rank (a sharded module: into each rank's shard, and sharded again).

    DDP and FSDP reduce only inside a backward through the module, and every rank must take part
    in the same reductions, while ranks backward different numbers of micro-batches (a rank whose
    replies all have advantage 0 backwards none). So every rank ends each update with one
    synchronised backward of a zero loss through the module (a one-token forward): it adds nothing
    to the accumulated gradients and makes every tensor of the key reach the reduction (a rank with
    no gradient contributes zeros)."""
    if accelerator.num_processes <= 1:
        return
    from trainers.logprobs import pad_token_id

    def zero_backward() -> None:
        slot = policies.activate(policies.agents_of(key)[0])
        ids = torch.tensor([[pad_token_id(slot.tokenizer)]], device=policies.device)
        logits = module(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=1).logits
        accelerator.backward(logits.sum() * 0.0)

    if fsdp.is_sharded(module):
        fsdp.reduce_gradients(module, zero_backward)
    else:
        zero_backward()
