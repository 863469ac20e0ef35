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


@pytest.mark.parametrize("seeds", [2, 3, 5])
def test_identical_seeds_give_exactly_the_one_seed_interval(seeds):
    # Every seed is scored on the same problems: copies of one seed add no problems, so no certainty.
    one = np.random.default_rng(4).integers(0, 2, (1, 43)).astype(float)
    assert bootstrap.interval(np.repeat(one, seeds, axis=0), resamples=2000) == bootstrap.interval(one, resamples=2000)


def test_identical_seeds_give_the_one_seed_interval_of_a_paired_change():
    rng = np.random.default_rng(5)
    before, after = (rng.integers(0, 2, (1, 30)).astype(float) for _ in range(2))
    one = bootstrap.paired_difference(after, before, resamples=1000)
    three = bootstrap.paired_difference(np.repeat(after, 3, axis=0), np.repeat(before, 3, axis=0), resamples=1000)
    assert one == three and one.low < one.mean < one.high


def test_every_seed_slot_of_a_resample_uses_the_same_problems():
    draws = bootstrap.draw(seeds=4, problems=10, resamples=50, rng=np.random.default_rng(0))
    assert draws.problems.shape == (50, 10) and draws.seeds.shape == (50, 4)
    # A seeds x problems table whose value is the problem's index: each slot's mean is the same.
    values = np.tile(np.arange(10.0), (4, 1))
    means = bootstrap.resampled_means(values, draws)
    assert means == pytest.approx(draws.problems.mean(axis=1))
