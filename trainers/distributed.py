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

FSDP and DeepSpeed shard the parameters, so a generation pass through the bare model would be a
collective that ranks reach a different number of times (replies differ in length): the trainer
refuses them with a clear error (:func:`check_engine`) until generation gathers the weights first
(see docs/scaling.md).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch


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


def make_accelerator(device: str):
    """The Accelerator of a training run: CPU processes over gloo when ``device`` resolves to the CPU
    (Accelerate only forms a multi-CPU group when told so), GPU ``LOCAL_RANK`` otherwise."""
    from accelerate import Accelerator
    from accelerate.utils import DistributedDataParallelKwargs

    cpu = device == "cpu" or (device == "auto" and not torch.cuda.is_available())
    # The models' buffers (rotary tables) never change: broadcasting them before every forward is waste.
    ddp = DistributedDataParallelKwargs(broadcast_buffers=False)
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


def check_engine(accelerator: Any) -> None:
    """Refuse engines the trainer does not drive correctly, with a message that says what to do."""
    kind = str(accelerator.distributed_type).split(".")[-1]
    if kind in ("FSDP", "DEEPSPEED", "MEGATRON_LM"):
        raise NotImplementedError(
            f"Accelerate is configured for {kind}, which shards the model: the trainer generates through "
            "the bare model on each rank, which would need the weights gathered first. Use DDP "
            "(`accelerate launch --multi_gpu`, configs/accelerate/ddp_*.yaml); see docs/scaling.md."
        )
    if _flag("ACCELERATE_USE_FSDP") or _flag("ACCELERATE_USE_DEEPSPEED"):
        raise NotImplementedError(
            f"FSDP or DeepSpeed was requested, but Accelerate runs {kind} here: Accelerate applies FSDP "
            "and DeepSpeed only on accelerators (GPU, XPU, NPU, ...), never on CPU processes over gloo, "
            "and the trainer does not drive sharded engines yet (docs/scaling.md). Launch with --multi_gpu."
        )


def prepare(accelerator: Any, policies: Any, optimizers: dict[str, torch.optim.Optimizer]):
    """Wrap each key's trained module and optimizer; returns ``({key: module}, {key: optimizer})``.

    One wrapper per key, built while only that key's weights require grad (module docstring)."""
    modules, prepared = {}, {}
    for key, optimizer in optimizers.items():
        policies.activate(policies.agents_of(key)[0])
        modules[key], prepared[key] = accelerator.prepare(policies.slot_of_key(key).model, optimizer)
    return modules, prepared


def prepare_owned(accelerator: Any, algorithm: Any, policies: Any):
    """The algorithm's own modules (``build_modules``) and their optimizers, on the policies' device and
    prepared like the policies' (a DDP wrapper each with many processes): ``({name: module}, {name: optimizer})``.
    Algorithms without ``build_modules`` own nothing."""
    build = getattr(algorithm, "build_modules", None)
    owned = dict(build(policies)) if callable(build) else {}
    modules, optimizers = {}, {}
    for name, module in owned.items():
        module.to(policies.device)
        optimizer = algorithm.build_optimizer(name, module)
        modules[name], optimizers[name] = accelerator.prepare(module, optimizer)
    return modules, optimizers


@contextmanager
def local_gradients(accelerator: Any, module: torch.nn.Module) -> Iterator[None]:
    """Backward passes inside accumulate gradients locally (no all-reduce)."""
    with accelerator.no_sync(module):
        yield


def synchronize_gradients(accelerator: Any, module: torch.nn.Module, policies: Any, key: str) -> None:
    """All-reduce (average) the gradients accumulated under :func:`local_gradients`, on every rank.

    DDP reduces only inside a backward through its wrapper, and every rank must take part in the
    same reductions, while ranks backward different numbers of micro-batches (a rank whose replies
    all have advantage 0 backwards none). So every rank ends each update with one synchronised
    backward of a zero loss through the wrapper (a one-token forward): it adds nothing to the
    accumulated gradients and makes every tensor of the key reach DDP's hooks (a rank with no
    gradient contributes zeros)."""
    if accelerator.num_processes <= 1:
        return
    from trainers.policy import pad_token_id

    slot = policies.activate(policies.agents_of(key)[0])
    ids = torch.tensor([[pad_token_id(slot.tokenizer)]], device=policies.device)
    logits = module(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=1).logits
    accelerator.backward(logits.sum() * 0.0)


def _flag(name: str) -> bool:
    return os.environ.get(name, "false").lower() in ("1", "true", "yes")
