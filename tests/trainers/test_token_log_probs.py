"""The loss's fused scoring of the sampled tokens (:func:`token_log_probs`) is the log-softmax of the
sampling distribution gathered at the targets: the same values and gradients, for every temperature
and top-p the trainer uses, fp32 and bf16 logits; its hand-written backward passes gradcheck, leaves
the logits as they were, and gives a token outside the nucleus no gradient."""

from __future__ import annotations

import pytest
import torch

from llm_coop_envs.lm.distribution import sampling_log_probs, token_log_probs

SETTINGS = [(1.0, 1.0), (0.6, 0.6), (0.0, 0.9), (1.3, 1.0), (0.7, 0.95)]


def batch(dtype: torch.dtype, vocab: int = 64, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    logits = (torch.randn(3, 5, vocab, generator=generator) * 3).to(dtype).requires_grad_()
    targets = torch.randint(0, vocab, (3, 5), generator=generator)
    return logits, targets


def reference(logits, targets, temperature, top_p):
    log_probs = sampling_log_probs(logits, temperature, top_p, keep=targets)
    return log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize(("temperature", "top_p"), SETTINGS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_values_and_gradients_equal_the_gathered_log_softmax(temperature, top_p, dtype):
    logits, targets = batch(dtype)
    upstream = torch.randn(3, 5)
    ours, theirs = token_log_probs(logits, targets, temperature, top_p), reference(logits, targets, temperature, top_p)
    assert ours.dtype == torch.float32 and torch.isfinite(ours).all()
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    (grad_ours,), (grad_theirs,) = (torch.autograd.grad(out, logits, upstream) for out in (ours, theirs))
    assert grad_ours.dtype == dtype
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 1e-3}
    torch.testing.assert_close(grad_ours, grad_theirs, **tolerance)


@pytest.mark.parametrize(("temperature", "top_p"), SETTINGS)
def test_the_backward_passes_gradcheck(temperature, top_p):
    logits, targets = batch(torch.float64, vocab=17)
    assert torch.autograd.gradcheck(lambda x: token_log_probs(x, targets, temperature, top_p), (logits,))


def test_a_target_outside_the_nucleus_stays_finite_and_dropped_tokens_get_no_gradient():
    """The scored token is kept in the nucleus (the module's convention), even the least likely one;
    the tokens dropped from the nucleus get no gradient, the target (1 - p) / T."""
    logits, _ = batch(torch.float32)
    targets = logits.detach().argmin(-1)
    out = token_log_probs(logits, targets, 0.6, 0.3)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, reference(logits, targets, 0.6, 0.3))
    (grad,) = torch.autograd.grad(out.sum(), logits)
    probs = reference(logits, targets, 0.6, 0.3).exp()
    at_target = grad.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(at_target, (1 - probs) / 0.6)
    dropped = sampling_log_probs(logits.detach(), 0.6, 0.3, keep=targets).isinf()
    assert dropped.any() and (grad[dropped] == 0).all()


@pytest.mark.parametrize(("temperature", "top_p"), SETTINGS)
def test_the_logits_are_left_as_they_were(temperature, top_p):
    """The forward may reuse the logits as its scores and the backward writes into a buffer: neither
    may write into the caller's tensor."""
    logits, targets = batch(torch.float32)
    before = logits.detach().clone()
    torch.autograd.grad(token_log_probs(logits, targets, temperature, top_p).sum(), logits)
    assert torch.equal(logits.detach(), before)


def test_greedy_is_scored_at_temperature_one():
    logits, targets = batch(torch.float32)
    torch.testing.assert_close(token_log_probs(logits, targets, 0.0, 0.9), token_log_probs(logits, targets, 1.0, 0.9))
