"""pass@k and accuracy@k from n samples per problem, with unbiased estimators.

Drawing k of the n samples without replacement, pass@k is the chance that at least one of them
passes (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1):

    pass@k = 1 - C(n - c, k) / C(n, k) = 1 - prod_{i = n - c + 1}^{n} (1 - k / i)

The product form never builds the huge binomials, so it stays exact in floating point for any n.
accuracy@k generalises it to graded scores (the fraction of tests passed): the expected best score
among k samples drawn without replacement. The j-th smallest of n scores is the best of a random
k-subset with probability C(j - 1, k - 1) / C(n, k); with 0/1 scores this is exactly pass@k.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

DEFAULT_KS = (1, 3, 5, 10)


def _check_n_k(n: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"n (samples per problem) must be at least 1, got {n}.")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n}, got {k}: draw at least k samples per problem.")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem with ``c`` correct samples out of ``n``."""
    _check_n_k(n, k)
    if not 0 <= c <= n:
        raise ValueError(f"c (correct samples) must be between 0 and n={n}, got {c}.")
    if n - c < k:  # every k-subset holds a correct sample
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def accuracy_at_k(scores: Sequence[float], k: int) -> float:
    """The expected best score (e.g. fraction of tests passed) among ``k`` of the ``scores`` drawn without replacement."""
    n = len(scores)
    _check_n_k(n, k)
    ordered = sorted(float(s) for s in scores)
    # weight_j = C(j-1, k-1) / C(n, k) for j = k..n, updated as a running ratio to avoid big integers
    weight = _first_weight(n, k)
    total = 0.0
    for j in range(k, n + 1):
        total += weight * ordered[j - 1]
        weight *= j / (j - k + 1)  # C(j, k-1) / C(j-1, k-1)
    return total


def _first_weight(n: int, k: int) -> float:
    """C(k-1, k-1) / C(n, k) = 1 / C(n, k), as a product of ratios."""
    return math.prod((k - i) / (n - i) for i in range(k))


def mean_pass_at_k(correct_counts: Iterable[tuple[int, int]], ks: Iterable[int] = DEFAULT_KS) -> dict[int, float | None]:
    """Mean pass@k over problems from ``(n, c)`` pairs; ``None`` for a k above some problem's n."""
    pairs = list(correct_counts)
    return {k: _mean([pass_at_k(n, c, k) for n, c in pairs]) if _all_have(pairs, k) else None for k in ks}


def mean_accuracy_at_k(score_lists: Iterable[Sequence[float]], ks: Iterable[int] = DEFAULT_KS) -> dict[int, float | None]:
    """Mean accuracy@k over problems from each problem's list of scores; ``None`` for a k above some n."""
    lists = [list(s) for s in score_lists]
    return {
        k: _mean([accuracy_at_k(s, k) for s in lists]) if _all_have([(len(s), 0) for s in lists], k) else None
        for k in ks
    }


def _all_have(pairs: Sequence[tuple[int, int]], k: int) -> bool:
    return bool(pairs) and all(n >= k for n, _ in pairs)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)

