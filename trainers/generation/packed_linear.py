"""Decoding on a CPU with the frozen linear layers' weights packed in oneDNN's blocked layout.

Why: a decode step multiplies a handful of rows by every weight matrix of the model. For such
skinny products, MKL's general matrix product (what ``nn.Linear`` calls) reads the weights far
below the memory bandwidth; oneDNN's inner product with weights reordered ahead of time streams
them about twice as fast (SmolLM2-135M, fp32, 2 cores, 8 rows: ~93 ms a step with ``nn.Linear``,
~55 ms packed; ``benchmarks/results/trainer_step.md``). Results agree with ``nn.Linear`` to float
rounding (the sum runs in another order), not bit for bit.

Only frozen fp32 weights on a CPU are packed (the base model under LoRA), once per generation call:
the copies (the weights' size again, ~540 MB for the 135M model) are released when the call ends,
so they never add to the loss pass's peak memory, and a weight changed between calls is simply
packed anew (~0.3 s for the 135M model). Trainable layers, other dtypes, autocast and other devices
run as they are.

The two operators are private to torch (``torch.ops.mkldnn._reorder_linear_weight`` and
``_linear_pointwise``): packing is used only with a torch inside this package's declared range whose
operators exist and agree with ``F.linear`` (:func:`packing_works`); otherwise every layer runs its
plain ``nn.Linear`` forward (docs/compatibility.md#private-internals).
"""

from __future__ import annotations

import contextlib
import functools

import torch

from llm_coop_envs.versions import in_tested_range


@functools.cache
def packing_works() -> bool:
    """Whether this torch, inside the declared range, packs and runs a linear layer with oneDNN (and
    agrees with ``F.linear``)."""
    if not in_tested_range("torch"):
        return False
    try:
        # Fixed values, not torch.randn: drawing here would shift the seeded generator of a run.
        weight, rows = torch.linspace(-1, 1, 32).reshape(8, 4), torch.linspace(1, -2, 12).reshape(3, 4)
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        out = torch.ops.mkldnn._linear_pointwise(rows, packed, None, "none", [], "")
    except (AttributeError, RuntimeError, NotImplementedError):
        return False
    return torch.backends.mkldnn.is_available() and torch.allclose(out, torch.nn.functional.linear(rows, weight), atol=1e-5)


@contextlib.contextmanager
def packed_linears(model: torch.nn.Module):
    """Within the context, the frozen fp32 CPU linear layers of ``model`` run on packed weights."""
    candidates = [m for m in model.modules() if _packable(m)] if packing_works() and not _cpu_autocast() else []
    layers = []
    try:
        for layer in candidates:
            try:
                packed = torch.ops.mkldnn._reorder_linear_weight(layer.weight.detach().contiguous(), None)
            except RuntimeError:  # a shape or layout oneDNN refuses: that layer runs as it is
                continue
            layer.forward = functools.partial(_packed_forward, packed, layer.bias)
            layers.append(layer)
        yield
    finally:
        for layer in layers:
            layer.__dict__.pop("forward", None)  # drops the packed copy with it


def _cpu_autocast() -> bool:
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # torch < 2.4 has no device argument
        return torch.is_autocast_cpu_enabled()


def _packable(module: torch.nn.Module) -> bool:
    weight = getattr(module, "weight", None)
    return (type(module) is torch.nn.Linear and not weight.requires_grad and weight.dtype == torch.float32
            and weight.device.type == "cpu" and "forward" not in module.__dict__)


def _packed_forward(packed: torch.Tensor, bias: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(rows, packed, bias, "none", [], "")
