"""Pure functions: joint sample formation, tree returns, advantages, token aggregation, the loss."""

import numpy as np
import pytest
import torch

from trainers.algorithms.base import LossBatch, aggregate, get_algorithm, group_relative, policy_gradient_loss
from trainers.rollout import Group, JointSample, Node, compute_returns, joint_indices, sibling_groups


def test_aligned_and_cross_group_sizes():
    assert joint_indices(4, 2, "aligned") == [(g, g) for g in range(4)]
    assert len(joint_indices(4, 2, "cross")) == 16
    assert len(joint_indices(3, 3, "cross")) == 27
    assert set(joint_indices(2, 2, "cross")) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    with pytest.raises(ValueError, match="aligned"):
        joint_indices(2, 2, "diagonal")


def _leaf(reward):
    return JointSample(replies={}, observations={}, reward=reward)


def test_tree_returns_discount_the_mean_of_children():
    # root has 2 samples; the first branches into a child node with samples of reward 1 and 3.
    child = Node(env=None, observations={}, acting=("a",), task_id="t", depth=1, samples=[_leaf(1.0), _leaf(3.0)])
    first, second = _leaf(0.5), _leaf(2.0)
    first.child = child
    root = Node(env=None, observations={}, acting=("a",), task_id="t", samples=[first, second])
    value = compute_returns(root, gamma=0.5)
    assert first.return_ == pytest.approx(0.5 + 0.5 * 2.0)  # 0.5 + γ · mean(1, 3)
    assert second.return_ == pytest.approx(2.0)
    assert value == pytest.approx((1.5 + 2.0) / 2)
    groups = sibling_groups([root])
    assert [g.depth for g in groups] == [0, 1]
    np.testing.assert_allclose(groups[0].returns, [1.5, 2.0])
    np.testing.assert_allclose(groups[1].returns, [1.0, 3.0])


def test_three_level_tree_with_gamma_one_sums_means():
    grandchild = Node(None, {}, ("a",), "t", 2, [_leaf(4.0), _leaf(0.0)])
    mid = _leaf(1.0)
    mid.child = grandchild
    child = Node(None, {}, ("a",), "t", 1, [mid])
    top = _leaf(0.0)
    top.child = child
    root = Node(None, {}, ("a",), "t", 0, [top])
    compute_returns(root, gamma=1.0)
    assert mid.return_ == pytest.approx(1.0 + 2.0)
    assert top.return_ == pytest.approx(3.0)


def test_group_relative_advantage_and_std_normalisation():
    returns = np.array([1.0, 2.0, 3.0, 6.0])
    np.testing.assert_allclose(group_relative(returns), [-2.0, -1.0, 0.0, 3.0])
    normalised = group_relative(returns, normalize_std=True)
    np.testing.assert_allclose(normalised, (returns - 3.0) / (returns.std() + 1e-6))
    np.testing.assert_allclose(group_relative(np.array([2.0, 2.0])), [0.0, 0.0])


def test_bundled_algorithms_advantages():
    group = Group(returns=np.array([0.0, 1.0]), rewards=np.array([0.0, 1.0]), agents=("a", "b"), depth=0)
    np.testing.assert_allclose(get_algorithm("magrpo").advantages(group), [-0.5, 0.5])
    np.testing.assert_allclose(get_algorithm("grpo").advantages(group), [-1.0, 1.0], atol=1e-5)
    np.testing.assert_allclose(get_algorithm("mareinforce", baseline=0.25).advantages(group), [-0.25, 0.75])
    with pytest.raises(KeyError, match="magrpo"):
        get_algorithm("nope")


def _batch(aggregation, logps=None):
    logps = logps if logps is not None else torch.tensor([[-1.0, -2.0, 0.0], [-3.0, 0.0, 0.0]], requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    return LossBatch(
        agent="a", logps=logps, old_logps=logps.detach(), mask=mask, advantages=torch.tensor([1.0, -1.0]),
        token_aggregation=aggregation, total_replies=2, total_tokens=3.0,
    )


def test_token_aggregations():
    values = torch.tensor([[1.0, 3.0, 100.0], [5.0, 100.0, 100.0]])  # padding (100) must never count
    assert float(aggregate(values, _batch("sequence_mean"))) == pytest.approx((2.0 + 5.0) / 2)
    assert float(aggregate(values, _batch("token_sum"))) == pytest.approx((4.0 + 5.0) / 2)
    assert float(aggregate(values, _batch("token_mean"))) == pytest.approx(9.0 / 3)


def test_first_epoch_gradient_is_advantage_times_grad_log_prob():
    batch = _batch("token_sum")
    policy_gradient_loss(batch).backward()
    # d/dlogp of −(1/2) Σ_i A_i Σ_t logp_it  = −A_i / 2 on real tokens, 0 on padding.
    expected = torch.tensor([[-0.5, -0.5, 0.0], [0.5, 0.0, 0.0]])
    torch.testing.assert_close(batch.logps.grad, expected)


def test_clipping_stops_gradient_beyond_the_trust_region():
    logps = torch.tensor([[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    batch = LossBatch(
        agent="a", logps=logps, old_logps=torch.zeros(2, 3), mask=torch.tensor([[1.0, 0, 0], [1.0, 0, 0]]),
        advantages=torch.tensor([1.0, 1.0]), clip_eps=0.2, total_replies=2,
    )
    policy_gradient_loss(batch).backward()
    assert logps.grad[0, 0] == 0  # ratio e^0.5 > 1.2 with A > 0: clipped, no gradient
    assert logps.grad[1, 0] < 0


def test_kl_penalty_is_zero_at_the_reference_and_positive_elsewhere():
    logps = torch.tensor([[-1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]], requires_grad=True)
    base = dict(agent="a", logps=logps, old_logps=logps.detach(), mask=torch.tensor([[1.0, 0, 0], [1.0, 0, 0]]),
                advantages=torch.zeros(2), total_replies=2, kl_coef=1.0)
    at_ref = policy_gradient_loss(LossBatch(ref_logps=logps.detach().clone(), **base))
    away = policy_gradient_loss(LossBatch(ref_logps=torch.full((2, 3), -2.0), **base))
    assert float(at_ref) == pytest.approx(0.0)
    assert float(away) > 0


def test_default_token_aggregation_is_the_sum_of_token_logprobs():
    """MAGRPO's −A·log π(reply), log π(reply) = Σ_t log π(token): the default (docs/algorithms.md)."""
    from trainers.algorithms.base import Capabilities

    assert Capabilities().loss_options.token_aggregation == "token_sum"
    logps = torch.tensor([[-1.0, -2.0, 0.0], [-3.0, 0.0, 0.0]], requires_grad=True)
    batch = LossBatch(agent="a", logps=logps, old_logps=logps.detach(), mask=torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
                      advantages=torch.tensor([1.0, -1.0]), total_replies=2)
    assert batch.token_aggregation == "token_sum"
    loss = policy_gradient_loss(batch)
    assert float(loss) == pytest.approx(-(1.0 * 2 + -1.0 * 1) / 2)  # ratio 1 per token, summed per reply
    loss.backward()
    torch.testing.assert_close(logps.grad, torch.tensor([[-0.5, -0.5, 0.0], [0.5, 0.0, 0.0]]))  # −A_g/G per token


def test_reply_weights_replace_the_plain_mean():
    values = torch.tensor([[1.0, 3.0, 100.0], [5.0, 100.0, 100.0]])
    weighted = LossBatch(**{**_batch("token_sum").__dict__, "weights": torch.tensor([0.75, 0.25])})
    assert float(aggregate(values, weighted)) == pytest.approx(0.75 * 4.0 + 0.25 * 5.0)
