"""Hierarchical bootstrap over seeds, then problems: pure functions on (seeds x problems) arrays.

A run's held-out score varies for two reasons: the training seed and the sample of problems. One
resample draws the problems with replacement once, then the seeds with replacement, and takes the
mean of the picked values. Every seed is scored on the same held-out problems, so every drawn seed
slot uses the same problem draw: drawing problems anew for each seed would average independent
problem samples and make the interval too narrow (S identical seeds would look like S times the
problems). The 2.5th and 97.5th percentiles of many such means are the 95 % interval. Comparisons
that share problems (after vs untrained, one algorithm vs another) reuse the same problem draws on
both sides, so the problem-to-problem spread that both share cancels.
"""

from __future__ import annotations

import dataclasses

import numpy as np

RESAMPLES = 10_000
RNG_SEED = 0


@dataclasses.dataclass(frozen=True)
class Interval:
    """A mean and its 95 % bootstrap interval."""

    mean: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Draws:
    """Index arrays of one set of resamples: seed slots (R, S) and one problem draw (R, P) shared by
    every slot of a resample."""

    seeds: np.ndarray
    problems: np.ndarray


def draw(seeds: int, problems: int, resamples: int = RESAMPLES, rng: np.random.Generator | None = None) -> Draws:
    """Problems first, then seeds: the problem draws of a given RNG seed are the same whatever the
    number of seeds, so S identical seeds give exactly the one-seed interval."""
    rng = rng if rng is not None else np.random.default_rng(RNG_SEED)
    problem_draws = rng.integers(0, problems, (resamples, problems))
    return Draws(rng.integers(0, seeds, (resamples, seeds)), problem_draws)


def resampled_means(values: np.ndarray, draws: Draws) -> np.ndarray:
    """The mean of ``values`` (seeds x problems) under every resample: shape (R,)."""
    values = _matrix(values)
    picked = values[draws.seeds[..., None], draws.problems[:, None, :]]
    return picked.mean(axis=(1, 2))


def interval(values: np.ndarray, resamples: int = RESAMPLES, seed: int = RNG_SEED) -> Interval:
    """Mean of a (seeds x problems) array with its hierarchical-bootstrap 95 % interval."""
    values = _matrix(values)
    means = resampled_means(values, draw(*values.shape, resamples, np.random.default_rng(seed)))
    return _summarise(float(values.mean()), means)


def paired_difference(after: np.ndarray, before: np.ndarray, resamples: int = RESAMPLES, seed: int = RNG_SEED) -> Interval:
    """``after - before`` measured on the same seeds and problems (e.g. trained vs its own step 0)."""
    after, before = _matrix(after), _matrix(before)
    if after.shape != before.shape:
        raise ValueError(f"paired arrays must have the same shape, got {after.shape} and {before.shape}")
    return interval(after - before, resamples, seed)


def difference(a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = RNG_SEED) -> Interval:
    """``a - b`` for two algorithms on the same problems (columns) with their own seeds (rows).

    Seeds are drawn independently for each side (seed k of one algorithm has nothing to do with
    seed k of the other); problems are drawn once per resample and used by every seed of both sides.
    """
    a, b = _matrix(a), _matrix(b)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"both sides need the same problems, got {a.shape[1]} and {b.shape[1]} columns")
    rng = np.random.default_rng(seed)
    problems = rng.integers(0, a.shape[1], (resamples, a.shape[1]))
    means = []
    for side in (a, b):
        seeds = rng.integers(0, side.shape[0], (resamples, side.shape[0]))
        means.append(resampled_means(side, Draws(seeds, problems)))
    return _summarise(float(a.mean() - b.mean()), means[0] - means[1])


def _summarise(point: float, means: np.ndarray) -> Interval:
    low, high = (float(x) for x in np.percentile(means, [2.5, 97.5]))
    # Summation order can put a zero-width interval one ulp beside its point: snap it back.
    low, high = (point if np.isclose(x, point, rtol=0, atol=1e-12) else x for x in (low, high))
    return Interval(point, low, high)


def _matrix(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or 0 in values.shape:
        raise ValueError(f"expected a non-empty (seeds x problems) array, got shape {values.shape}")
    if np.isnan(values).any():
        raise ValueError("values contain NaN: leave out metrics a run does not have instead")
    return values
