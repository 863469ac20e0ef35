"""The hierarchical bootstrap on cases whose answer is known."""

import numpy as np
import pytest

from benchmarks.learning import bootstrap


def test_identical_values_give_a_zero_width_interval():
    values = np.full((3, 20), 0.25)
    result = bootstrap.interval(values, resamples=500)
    assert (result.mean, result.low, result.high) == (0.25, 0.25, 0.25)


def test_a_constant_shift_gives_the_shift_exactly():
    rng = np.random.default_rng(1)
    before = rng.integers(0, 2, (2, 30)).astype(float)
    result = bootstrap.paired_difference(before + 0.1, before, resamples=500)
    assert result.mean == pytest.approx(0.1)
    assert result.low == pytest.approx(0.1) and result.high == pytest.approx(0.1)


def test_two_algorithms_share_the_problem_draws():
    # Problems differ a lot, seeds do not: only a shared problem draw gives the shift without spread.
    per_problem = np.linspace(0.0, 1.0, 25)
    a = np.tile(per_problem, (2, 1))
    result = bootstrap.difference(a, a - 0.2, resamples=500)
    assert (result.mean, result.low, result.high) == pytest.approx((0.2, 0.2, 0.2))


def test_one_seed_of_coin_flips_matches_the_normal_approximation():
    # One seed: the bootstrap over 400 problems, half solved, has a standard error of sqrt(.25 / 400) = 0.025.
    values = np.array([[1.0, 0.0] * 200])
    result = bootstrap.interval(values, resamples=4000)
    assert result.mean == 0.5
    assert result.low == pytest.approx(0.5 - 1.96 * 0.025, abs=0.01)
    assert result.high == pytest.approx(0.5 + 1.96 * 0.025, abs=0.01)


def test_seed_spread_widens_the_interval():
    # Two seeds that disagree completely: resampling seeds alone can give 0, 0.5 or 1.
    values = np.array([[0.0] * 10, [1.0] * 10])
    result = bootstrap.interval(values, resamples=2000)
    assert result.mean == 0.5 and result.low == 0.0 and result.high == 1.0


def test_fixed_seed_makes_it_reproducible():
    values = np.random.default_rng(3).random((2, 15))
    assert bootstrap.interval(values, resamples=300) == bootstrap.interval(values, resamples=300)


@pytest.mark.parametrize("bad", [np.zeros((0, 3)), np.zeros(4), np.array([[np.nan, 1.0]])])
def test_bad_input_is_refused(bad):
    with pytest.raises(ValueError):
        bootstrap.interval(bad)


def test_paired_arrays_must_match():
    with pytest.raises(ValueError, match="same shape"):
        bootstrap.paired_difference(np.zeros((2, 3)), np.zeros((2, 4)))
