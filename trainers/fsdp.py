"""FSDP2 (torch's ``fully_shard``) under the trainer: the weights, gradients and AdamW states of every
trained model are sharded across the processes, and gathered whole only while they are used.

When it applies: ``accelerate launch`` with an FSDP config of ``fsdp_version: 2``
(configs/accelerate/fsdp2_*.yaml), which the launcher passes to each process as ``FSDP_*`` variables.

Why the trainer shards the models itself instead of ``Accelerator.prepare``:

* Accelerate's FSDP2 path takes one model per ``prepare`` call and rewires only the optimizers of
  that call, while the ``lora_per_agent`` layout has one base model shared by one optimizer per
  agent; preparing that base once per agent would shard it twice.
* Accelerate applies its FSDP plugin only on accelerators: with CPU processes over gloo it silently
  falls back to DDP. Sharding here runs the same code on GPUs and on the CPU processes of the tests.

Why the weights are gathered around every pass through the model: a sharded model all-gathers each
layer's weights inside every forward, a collective that every process must enter the same number of
times. Processes do not: their replies differ in length (a different number of decoding forwards)
and their updates in number of micro-batches (replies with advantage 0 are skipped). So the
trainer gathers the full weights once (:func:`gathered`, one all-gather per sharded layer, entered
by every process at the same point), runs all of its forwards and backwards locally, and shards again:

* **rollouts and evaluation**: gathered, then resharded;
* **an update of one key**: gathered, micro-batches backwarded locally (gradients kept whole,
  not reduced), then one synchronised zero-loss backward (:func:`reduce_gradients`) that
  reduce-scatters the accumulated gradients (the average over the processes, as DDP) and reshards;
  clipping and the AdamW step then work on each process's shards.

What that buys: between passes each process holds 1/N of the weights, and always 1/N of the
gradients' reduced form and of the AdamW states (ZeRO-3 at rest). While a pass runs, every process
holds the full weights (and, during an update, the full gradients of the key being trained), as
under DDP: peak memory is that of DDP plus nothing, the saving is in the optimizer states and in
everything held between passes. Activation checkpointing, parameter offloading and CPU-RAM-efficient
loading from the Accelerate config are not applied (a warning says so, :func:`warn_unapplied`);
``fsdp_reshard_after_forward`` changes nothing, since every pass runs on gathered weights.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import torch


@dataclasses.dataclass(frozen=True)
class FsdpSettings:
    """The parts of Accelerate's FSDP config the trainer applies."""

    layer_classes: tuple[str, ...] = ()
    """Class names of the layers sharded as one unit each (``fsdp_transformer_layer_cls_to_wrap``);
    empty: the model's ``_no_split_modules`` (its decoder layer), as Accelerate does."""
    wrap_layers: bool = True
    """False for ``fsdp_auto_wrap_policy: NO_WRAP``: the whole model is one unit."""

    @classmethod
    def from_env(cls) -> FsdpSettings | None:
        """The settings ``accelerate launch`` passed down, or None when FSDP was not asked for."""
        if not env_flag("ACCELERATE_USE_FSDP"):
            return None
        version = os.environ.get("FSDP_VERSION", "1")
        if version != "2":
            raise NotImplementedError(
                f"Accelerate is configured for FSDP version {version}; the trainer drives FSDP2 only "
                "(torch's fully_shard). Set `fsdp_version: 2` in the config (configs/accelerate/fsdp2_*.yaml)."
            )
        classes = tuple(c.strip() for c in os.environ.get("FSDP_TRANSFORMER_CLS_TO_WRAP", "").split(",") if c.strip())
        return cls(
            layer_classes=classes,
            wrap_layers=os.environ.get("FSDP_AUTO_WRAP_POLICY", "TRANSFORMER_BASED_WRAP") != "NO_WRAP",
        )


def warn_unapplied() -> None:
    """Say which settings of the launch's FSDP config the trainer does not apply, and turn off
    ``cpu_ram_efficient_loading``: with it, transformers loads real weights on the first process
    only (meta tensors elsewhere) and counts on Accelerate's prepare to broadcast them, which the
    trainer does not call; every process loads the weights itself before they are sharded."""
    for name, what in (("FSDP_ACTIVATION_CHECKPOINTING", "activation checkpointing"),
                       ("FSDP_OFFLOAD_PARAMS", "parameter offloading"),
                       ("FSDP_CPU_RAM_EFFICIENT_LOADING", "CPU-RAM-efficient loading")):
        if env_flag(name):
            warnings.warn(f"FSDP {what} ({name.lower()}) is not applied by this trainer (docs/scaling.md).",
                          stacklevel=3)
    os.environ["FSDP_CPU_RAM_EFFICIENT_LOADING"] = "false"  # read by transformers when it loads a model


def shard(model: torch.nn.Module, settings: FsdpSettings, device_type: str) -> torch.nn.Module:
    """Shard ``model`` in place over all processes: each of its layers one unit, then the rest.

    Optimizers must be built afterwards: ``fully_shard`` replaces the parameters by sharded ones."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(device_type, (dist.get_world_size(),))
    for layer in _layers(model, settings):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def is_sharded(module: torch.nn.Module) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(module, FSDPModule)


@contextmanager
def gathered(models: Iterable[torch.nn.Module]) -> Iterator[None]:
    """Full weights on every process inside (forwards then need no collective); sharded again after.
    Every process must enter it at the same point: the gather is one all-gather per unit."""
    models = [m for m in dict.fromkeys(models) if is_sharded(m)]
    for model in models:
        unshard(model)
    try:
        yield
    finally:
        for model in models:
            reshard(model)


def unshard(model: torch.nn.Module, accumulate: bool = False) -> None:
    """Gather ``model``'s weights and keep them whole through forwards (and, with ``accumulate``,
    through backwards, whose gradients then stay whole and unreduced on this process)."""
    model.set_reshard_after_forward(False)
    if accumulate:
        model.set_requires_gradient_sync(False)
        model.set_reshard_after_backward(False)
    for unit in _units(model):
        unit.unshard()


def reshard(model: torch.nn.Module) -> None:
    for unit in _units(model):
        unit.reshard()
    model.set_reshard_after_forward(True)


def reduce_gradients(model: torch.nn.Module, zero_backward) -> None:
    """Average the gradients accumulated under ``unshard(model, accumulate=True)`` over the
    processes, into each process's shard, and reshard: ``zero_backward()`` runs one backward of a
    zero loss through ``model`` (on every process), in which FSDP reduce-scatters every gradient."""
    model.set_requires_gradient_sync(True)
    model.set_reshard_after_backward(True)
    zero_backward()
    reshard(model)


def full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """The whole tensor of a shard (a collective: every process calls it), a plain tensor as is."""
    from torch.distributed.tensor import DTensor

    return tensor.full_tensor() if isinstance(tensor, DTensor) else tensor


def _units(model: torch.nn.Module) -> list[torch.nn.Module]:
    return [m for m in model.modules() if is_sharded(m)]


def _layers(model: torch.nn.Module, settings: FsdpSettings) -> Sequence[torch.nn.Module]:
    if not settings.wrap_layers:
        return []
    wanted = set(settings.layer_classes) or _no_split_modules(model)
    layers = [m for m in model.modules() if type(m).__name__ in wanted]
    if not layers:
        raise ValueError(
            f"FSDP: the model ({type(model).__name__}) has no layer of class {sorted(wanted)}: set "
            "fsdp_transformer_layer_cls_to_wrap in the Accelerate config to its decoder layer class "
            "(e.g. Qwen2DecoderLayer, LlamaDecoderLayer)."
        )
    return layers


def _no_split_modules(model: torch.nn.Module) -> set[str]:
    names: set[str] = set()
    for module in model.modules():
        names.update(getattr(module, "_no_split_modules", None) or ())
    return names


def env_flag(name: str) -> bool:
    """A yes/no variable of the launch (Accelerate writes "true"/"false")."""
    return os.environ.get(name, "false").lower() in ("1", "true", "yes")
