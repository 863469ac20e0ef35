"""The distribution a reply is sampled from, shared by the sampler and the loss.

Sampling draws each token from ``softmax(logits / temperature)`` restricted to the nucleus (the most
likely tokens whose mass reaches ``top_p``) and renormalised over it. Training scores the sampled
tokens under that same distribution, so the PPO ratio, the KL penalty and the policy gradient all
refer to the policy that generated the data.

Two conventions:

* temperature 0 (greedy) has no density; it is scored at temperature 1 (the model's own softmax);
* when scoring, the scored token always stays in the nucleus. At sampling time it is inside by
  construction; a later forward of the same weights can differ in the last bits and move a token that
  sat on the nucleus boundary out of it, which would give log 0 = −inf. Keeping it costs nothing when
  it is inside and keeps the loss finite when it is not.
"""

from __future__ import annotations

import torch


def sampling_log_probs(
    logits: torch.Tensor, temperature: float, top_p: float, keep: torch.Tensor | None = None
) -> torch.Tensor:
    """Log-probabilities over the last axis under temperature and nucleus; ``keep`` (indices, shape of
    ``logits`` without its last axis) are tokens that stay in the nucleus whatever their mass."""
    scores = logits.float()
    if temperature > 0 and temperature != 1:
        scores = scores / temperature
    if top_p < 1.0:
        scores = scores.masked_fill(outside_nucleus(scores.detach(), top_p, keep), -float("inf"))
    return torch.log_softmax(scores, dim=-1)


def token_log_probs(logits: torch.Tensor, targets: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """``sampling_log_probs(logits, temperature, top_p, keep=targets)`` at ``targets`` only (shape of
    ``targets``), with its gradient: what the loss needs, in fewer passes over the vocabulary.

    The log-softmax of a loss micro-batch is ``[rows, tokens, vocabulary]`` (8 x 128 x 49,152 floats,
    200 MB): written out, gathered from, and in the backward a zero tensor of that size scattered into
    and passed back through the log-softmax. Here the forward keeps one log-sum-exp per position and the
    backward writes the gradient ``(onehot(target) - p) / temperature`` in one buffer."""
    return _ScoredTokens.apply(logits, targets, _scale(temperature), top_p)


def _scale(temperature: float) -> float:
    """Greedy (temperature 0) is scored at temperature 1 (see the module's conventions)."""
    return temperature if temperature > 0 else 1.0


class _ScoredTokens(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets, temperature, top_p):
        scores = _scores(logits, temperature)
        drop = outside_nucleus(scores, top_p, targets) if top_p < 1.0 else None
        if drop is not None:  # never in place on the caller's logits
            scores = scores.masked_fill(drop, -float("inf")) if scores is logits else scores.masked_fill_(drop, -float("inf"))
        log_total = torch.logsumexp(scores, dim=-1)
        ctx.save_for_backward(logits, targets, log_total, drop)
        ctx.temperature = temperature
        return scores.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - log_total

    @staticmethod
    @torch.autograd.function.once_differentiable  # the backward is written by hand, not itself differentiable
    def backward(ctx, grad):
        logits, targets, log_total, drop = ctx.saved_tensors
        probs = _scores(logits, ctx.temperature, copy=True)
        if drop is not None:
            probs.masked_fill_(drop, -float("inf"))
        probs.sub_(log_total.unsqueeze(-1)).exp_()
        scale = (grad / ctx.temperature).unsqueeze(-1)
        grad_logits = probs.mul_(-scale).scatter_add_(-1, targets.unsqueeze(-1), scale)
        return grad_logits.to(logits.dtype), None, None, None


def _scores(logits: torch.Tensor, temperature: float, copy: bool = False) -> torch.Tensor:
    """``logits / temperature`` in at least fp32: a new tensor when ``copy`` (the backward writes into
    it), else possibly ``logits`` itself."""
    scores = logits.to(torch.promote_types(logits.dtype, torch.float32))
    if temperature != 1:
        return scores / temperature
    return scores.clone() if copy and scores is logits else scores


NUCLEUS_CANDIDATES = 256
"""How many of the most likely tokens :func:`outside_nucleus` looks at first. A full sort of the
vocabulary (49,152 tokens for SmolLM2) per position cost 2.3 s per loss micro-batch of 8 x 128
positions and 62 ms per decode step of 32 rows on two cores, against 0.22 s and 5 ms from the
candidates (``benchmarks/results/top_p_cost.md``); at top-p 0.6 the nucleus is rarely more than a few
dozen tokens."""


def outside_nucleus(scores: torch.Tensor, top_p: float, keep: torch.Tensor | None = None) -> torch.Tensor:
    """True for the least likely tokens whose total mass stays within 1 − top_p (the most likely one,
    and ``keep``, are never dropped).

    A token is dropped when the tokens more likely than it already hold ``top_p`` of the mass. Rows
    whose :data:`NUCLEUS_CANDIDATES` most likely tokens hold ``top_p`` are decided from those alone
    (every other token is then dropped); the others by a sort of the whole vocabulary."""
    count = min(NUCLEUS_CANDIDATES, scores.shape[-1])
    top_scores, top_index = scores.topk(count, dim=-1)
    top_probs = (top_scores - scores.logsumexp(-1, keepdim=True)).exp()
    more_likely = torch.nn.functional.pad(top_probs.cumsum(-1)[..., :-1], (1, 0))  # mass above each candidate
    drop = torch.ones_like(scores, dtype=torch.bool).scatter(-1, top_index, more_likely >= top_p)
    uncovered = ~(top_probs.sum(-1) >= top_p)  # also true for a row of NaN or -inf scores
    if uncovered.any():
        drop[uncovered] = _outside_nucleus_sorted(scores[uncovered], top_p)
    if keep is not None:
        drop = drop.scatter(-1, keep.unsqueeze(-1), False)
    return drop


def _outside_nucleus_sorted(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """:func:`outside_nucleus` by a sort of the whole last axis (without ``keep``)."""
    sorted_scores, order = torch.sort(scores, dim=-1, descending=False)
    drop_sorted = sorted_scores.softmax(-1).cumsum(-1) <= (1 - top_p)
    drop_sorted[..., -1] = False
    return torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
