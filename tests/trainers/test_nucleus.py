"""Top-p filtering decides from the most likely tokens when they hold the nucleus, and agrees with a
sort of the whole vocabulary: the same tokens dropped, for peaked rows, flat rows (decided by the
sort) and both in one batch."""

from __future__ import annotations

import pytest
import torch

from llm_coop_envs.lm.distribution import (
    NUCLEUS_CANDIDATES,
    _outside_nucleus_sorted,
    outside_nucleus,
    sampling_log_probs,
)

VOCAB = 3000


def logits(scale: float, *shape: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, VOCAB, generator=generator) * scale


@pytest.mark.parametrize("top_p", [0.3, 0.6, 0.9, 0.99])
@pytest.mark.parametrize("scale", [8.0, 3.0, 0.05])
def test_the_same_tokens_are_dropped_as_by_a_full_sort(scale, top_p):
    scores = logits(scale, 4, 6)
    assert torch.equal(outside_nucleus(scores, top_p), _outside_nucleus_sorted(scores, top_p))


def test_peaked_and_flat_rows_in_one_batch_are_each_decided_right():
    scores = torch.cat([logits(8.0, 3), logits(0.01, 3, seed=1)])
    top = torch.softmax(scores, -1).topk(NUCLEUS_CANDIDATES, -1).values.sum(-1)
    assert (top[:3] >= 0.6).all() and (top[3:] < 0.6).all()  # both paths are taken
    drop = outside_nucleus(scores, 0.6)
    assert torch.equal(drop, _outside_nucleus_sorted(scores, 0.6))
    assert (~drop[:3]).sum(-1).max() < NUCLEUS_CANDIDATES < (~drop[3:]).sum(-1).min()


def test_the_most_likely_token_and_kept_tokens_stay():
    scores = logits(8.0, 5)
    keep = scores.argmin(-1)  # the least likely token of each row
    drop = outside_nucleus(scores, 0.01, keep)
    assert not drop.gather(-1, scores.argmax(-1, keepdim=True)).any()
    assert not drop.gather(-1, keep.unsqueeze(-1)).any()
    assert (~drop).sum(-1).tolist() == [2] * 5


def test_masked_tokens_and_broken_rows_do_not_crash():
    scores = logits(3.0, 3)
    scores[0, 10:] = -float("inf")  # only ten tokens allowed
    scores[1] = float("nan")
    drop = outside_nucleus(scores, 0.6)
    assert drop[0, 10:].all() and not drop[0, :10].all()
    assert drop.shape == scores.shape
    log_probs = sampling_log_probs(scores[:1], 0.6, 0.6)
    assert torch.isclose(log_probs.exp().sum(), torch.tensor(1.0))
