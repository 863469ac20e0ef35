"""pass@k / accuracy@k against brute force over every k-subset."""

import itertools
import math

import pytest

from benchmarks.metrics import accuracy_at_k, mean_accuracy_at_k, mean_pass_at_k, pass_at_k


def brute_force_best(scores, k):
    subsets = list(itertools.combinations(scores, k))
    return sum(max(s) for s in subsets) / len(subsets)


def test_known_values():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 6, 5) == 1.0  # fewer than k failures: every draw holds a pass
    assert pass_at_k(5, 1, 5) == 1.0


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_pass_at_k_matches_combinatorics(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            exact = 1 - math.comb(n - c, k) / math.comb(n, k)
            brute = brute_force_best([1.0] * c + [0.0] * (n - c), k)
            assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)
            assert pass_at_k(n, c, k) == pytest.approx(brute, abs=1e-12)


def test_pass_at_k_is_stable_for_large_n():
    value = pass_at_k(2000, 7, 10)
    assert value == pytest.approx(1 - math.comb(1993, 10) / math.comb(2000, 10), rel=1e-12)


def test_accuracy_at_k_matches_brute_force():
    scores = [0.0, 0.25, 0.5, 0.5, 1.0, 0.75, 0.1]
    for k in range(1, len(scores) + 1):
        assert accuracy_at_k(scores, k) == pytest.approx(brute_force_best(scores, k), abs=1e-12)
    assert accuracy_at_k(scores, 1) == pytest.approx(sum(scores) / len(scores))


def test_accuracy_equals_pass_for_binary_scores():
    assert accuracy_at_k([1, 0, 0, 1, 0, 0, 0, 0, 0, 0], 3) == pytest.approx(pass_at_k(10, 2, 3))


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 1, 0), (5, 1, 6)])
def test_bad_arguments_say_what_to_fix(n, c, k):
    with pytest.raises(ValueError, match="must be"):
        pass_at_k(n, c, k)


def test_means_skip_k_above_n():
    means = mean_pass_at_k([(5, 1), (5, 5)], ks=(1, 3, 10))
    assert means[1] == pytest.approx((0.2 + 1.0) / 2)
    assert means[10] is None
    assert mean_accuracy_at_k([[0.5, 1.0], [0.0, 0.0]], ks=(1, 2, 3)) == {1: 0.375, 2: 0.5, 3: None}
    assert mean_pass_at_k([], ks=(1,)) == {1: None}
