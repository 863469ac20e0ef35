"""Many processes (and nodes): data parallel over problems, gradients averaged before each update.

Launch with ``accelerate launch --multi_gpu`` (or ``torchrun``): each process builds the same
policies from the same seed, rolls out its own problems, and :meth:`Distributed.average_gradients`
all-reduces the trained tensors' gradients before every optimizer step, so the replicas stay
identical. Without a GPU the same launch runs CPU processes over gloo. A single process (no
``WORLD_SIZE``) makes every method a no-op.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import Any

import torch


@dataclasses.dataclass(frozen=True)
class Distributed:
    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_env(cls) -> Distributed:
        """Join the process group that ``accelerate launch``/``torchrun`` describe in the environment."""
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        if world_size <= 1:
            return cls()
        import torch.distributed as dist

        if not dist.is_initialized():
            dist.init_process_group(backend=_backend_for_this_machine())
        return cls(rank=dist.get_rank(), world_size=dist.get_world_size())

    def average_gradients(self, params: Iterable[torch.nn.Parameter]) -> None:
        if self.world_size <= 1:
            return
        import torch.distributed as dist

        for param in params:
            if param.grad is None:
                # Every rank must take part in every all-reduce: a rank whose replies all had
                # advantage 0 contributes zeros.
                param.grad = torch.zeros_like(param)
            dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)
            param.grad.div_(self.world_size)

    def gather_objects(self, value: Any) -> list[Any]:
        """Every rank's ``value``, in rank order (on every rank)."""
        if self.world_size <= 1:
            return [value]
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.world_size
        dist.all_gather_object(gathered, value)
        return gathered

    def mean(self, value: float) -> float:
        if self.world_size <= 1:
            return value
        import torch.distributed as dist

        tensor = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return float(tensor.item()) / self.world_size


def _backend_for_this_machine() -> str:
    """gloo on CPU; on GPUs NCCL for CUDA tensors and gloo for CPU ones (``mean`` reduces a CPU scalar).

    Each process must own one GPU before the group forms, otherwise every rank would put its model
    on ``cuda:0``; the launcher says which one in ``LOCAL_RANK``.
    """
    if not torch.cuda.is_available():
        return "gloo"
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return "cpu:gloo,cuda:nccl"
