"""Packed weights for decoding on a CPU: same outputs as nn.Linear, only frozen fp32 layers, and
every layer back as it was afterwards, even after an error."""

from __future__ import annotations

import types

import pytest
import torch

from trainers.generation.packed_linear import packed_linears, packing_works

pytestmark = pytest.mark.skipif(not packing_works(), reason="this torch build has no oneDNN linear")


def _model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8, bias=False))
    model.requires_grad_(False)
    return model


def _is_packed(layer: torch.nn.Module) -> bool:
    return "forward" in layer.__dict__


def test_packed_layers_give_the_same_outputs_and_are_restored() -> None:
    model, rows = _model(), torch.randn(5, 3, 16)
    plain = model(rows)
    with packed_linears(model):
        assert _is_packed(model[0]) and _is_packed(model[2])
        packed = model(rows)
    torch.testing.assert_close(packed, plain, rtol=1e-5, atol=1e-5)
    assert not _is_packed(model[0]) and not _is_packed(model[2])


def test_trainable_layers_and_autocast_are_left_alone() -> None:
    model = _model()
    model[2].weight.requires_grad_(True)
    with packed_linears(model):
        assert _is_packed(model[0]) and not _is_packed(model[2])
    with torch.autocast("cpu", dtype=torch.bfloat16), packed_linears(model):
        assert not _is_packed(model[0])


def test_a_weight_changed_between_uses_is_packed_again() -> None:
    model, rows = _model(), torch.randn(4, 16)
    with packed_linears(model):
        model(rows)
    with torch.no_grad():
        model[0].weight.mul_(2)  # in place: a loaded checkpoint or an optimizer step
    model[2].weight = torch.nn.Parameter(torch.randn(8, 32), requires_grad=False)  # replaced
    with packed_linears(model):
        packed = model(rows)
    torch.testing.assert_close(packed, model(rows), rtol=1e-5, atol=1e-5)


def test_layers_are_restored_after_an_error() -> None:
    model = _model()
    with pytest.raises(ValueError), packed_linears(model):
        raise ValueError("a failed decode")
    assert not any(_is_packed(layer) for layer in model)



def test_packing_leaves_the_random_generator_alone() -> None:
    """A run resumed from a checkpoint must draw what the straight run drew, whenever packing is
    first checked."""
    model = _model()
    packing_works.cache_clear()
    state = torch.get_rng_state()
    with packed_linears(model):
        model(torch.ones(2, 16))
    assert torch.equal(torch.get_rng_state(), state)


def test_a_layer_onednn_refuses_runs_as_it_is(monkeypatch) -> None:
    model, rows = _model(), torch.randn(3, 16)
    reorder = torch.ops.mkldnn._reorder_linear_weight

    def refuse_the_wide_one(weight, *args):
        if weight.shape[0] == 32:
            raise RuntimeError("unsupported")
        return reorder(weight, *args)

    monkeypatch.setattr(torch.ops.mkldnn, "_reorder_linear_weight", refuse_the_wide_one)
    with packed_linears(model):
        assert not _is_packed(model[0]) and _is_packed(model[2])
        torch.testing.assert_close(model(rows), _model()(rows), rtol=1e-5, atol=1e-5)
    assert not any(_is_packed(layer) for layer in model)


@pytest.mark.parametrize("how", ["private operator gone", "torch outside the declared range"])
def test_without_the_private_operators_every_layer_runs_plain_nn_linear(monkeypatch, how) -> None:
    from trainers.generation import packed_linear

    if how == "private operator gone":
        monkeypatch.setattr(torch.ops, "mkldnn", types.SimpleNamespace())  # a torch without the operators
    else:
        monkeypatch.setattr(packed_linear, "in_tested_range", lambda dist: dist != "torch")
    packing_works.cache_clear()
    try:
        assert not packing_works()
        model, rows = _model(), torch.randn(5, 3, 16)
        with packed_linears(model):
            assert not any(_is_packed(layer) for layer in model)
            assert torch.equal(model(rows), _model()(rows))  # nn.Linear itself, bit for bit
    finally:
        monkeypatch.undo()
        packing_works.cache_clear()
    assert packing_works()
