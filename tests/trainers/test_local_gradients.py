"""With one process, gradients accumulate without Accelerate's ``no_sync``: a one-process FSDP launch
on a GPU leaves the model unsharded, and ``no_sync`` there calls a method only sharded models have
(seen on an H100: ``'LlamaForCausalLM' object has no attribute 'set_requires_gradient_sync'``)."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")

from trainers import distributed  # noqa: E402


class _OneProcessFsdpAccelerator:
    num_processes = 1

    def no_sync(self, module):
        raise AttributeError(f"'{type(module).__name__}' object has no attribute 'set_requires_gradient_sync'")


class _TwoProcessAccelerator:
    num_processes = 2

    def __init__(self):
        self.held_back = 0

    @contextlib.contextmanager
    def no_sync(self, module):
        self.held_back += 1
        yield


def test_one_process_accumulates_without_no_sync():
    module = torch.nn.Linear(2, 1)
    with distributed.local_gradients(_OneProcessFsdpAccelerator(), module):
        module(torch.ones(1, 2)).sum().backward()
    assert module.weight.grad is not None


def test_many_processes_still_hold_the_all_reduce_back():
    accelerator = _TwoProcessAccelerator()
    with distributed.local_gradients(accelerator, torch.nn.Linear(2, 1)):
        pass
    assert accelerator.held_back == 1
