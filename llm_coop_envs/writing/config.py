"""Reward configuration of the writing envs: level thresholds and component weights.

The defaults (:data:`TLDR_LEVELS`, :data:`ARXIV_LEVELS`) are the numbers documented on each env's
page; changing them changes the reward, so an env made with other numbers is a different env.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from llm_coop_envs.writing.bands import Band

COMPONENTS = ("structure", "style", "coherence", "rouge")


@dataclasses.dataclass(frozen=True)
class RewardWeights:
    """Multipliers of the reward components; the total is the weighted sum of component scores in [0, 1]."""

    structure: float = 1.0
    style: float = 1.0
    coherence: float = 1.0
    rouge: float = 1.0
    """Used by ``tldr-v0`` only (ROUGE of the short summary against the author's TL;DR)."""

    def __post_init__(self) -> None:
        for name in COMPONENTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"RewardWeights.{name} must be a finite number >= 0, got {value!r}.")

    @classmethod
    def coerce(cls, value: RewardWeights | Mapping[str, float]) -> RewardWeights:
        """Accept a RewardWeights or a dict such as ``{"rouge": 0.0}`` (missing names keep their default)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - set(COMPONENTS))
            if unknown:
                raise ValueError(f"Unknown reward weight(s) {unknown}; the components are {list(COMPONENTS)}.")
            return cls(**dict(value))
        raise TypeError(f"reward_weights must be a RewardWeights or a dict of weights, got {type(value).__name__}.")


def _word_bounds(name: str, bounds: Any) -> None:
    ok = (
        isinstance(bounds, tuple)
        and len(bounds) == 2
        and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
        and 1 <= bounds[0] <= bounds[1]
    )
    if not ok:
        raise ValueError(f"LevelConfig.{name} must be a (min_words, max_words) tuple of ints with 1 <= min <= max, got {bounds!r}.")


@dataclasses.dataclass(frozen=True)
class LevelConfig:
    """The thresholds of the gated levels (structure → style → coherence) and the component weights."""

    first_words: tuple[int, int]
    """Accepted word count of the first role's text (``tldr`` / ``background``)."""
    second_words: tuple[int, int]
    """Accepted word count of the second role's text (``detail`` / ``method``)."""
    length_ratio: Band
    """Words of the second text divided by words of the first."""
    overlap: Band
    """Jaccard similarity of the two texts' content-word stems (stopwords removed)."""
    transition_density: Band = Band(0.0, 0.0, 0.08, 0.2)
    """Transition phrases per word of the joint text: more than 0.08 loses credit, more than 0.2 fails."""
    category_scores: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0)
    """Coherence credit by number of distinct transition categories found (0, 1, 2, 3 or more)."""
    min_distinct_ratio: float = 0.3
    """A text whose distinct words are fewer than this share of its words is degenerate (fails structure)."""
    copy_ngram: int = 4
    """Length of the word sequences compared with the source to detect copying."""
    max_copied_fraction: float = 0.5
    """A text with more than this share of its word n-grams found in the source is a copy (fails structure)."""
    weights: RewardWeights = RewardWeights()

    def __post_init__(self) -> None:
        _word_bounds("first_words", self.first_words)
        _word_bounds("second_words", self.second_words)
        for name in ("length_ratio", "overlap", "transition_density"):
            if not isinstance(getattr(self, name), Band):
                raise TypeError(f"LevelConfig.{name} must be a Band(low, ideal_low, ideal_high, high).")
        scores = self.category_scores
        if not scores or scores[0] != 0.0 or any(not 0.0 <= s <= 1.0 for s in scores) or list(scores) != sorted(scores):
            raise ValueError(f"category_scores must start at 0.0 and rise within [0, 1], got {scores!r}.")
        if not 0.0 <= self.min_distinct_ratio <= 1.0:
            raise ValueError(f"min_distinct_ratio must be within [0, 1], got {self.min_distinct_ratio!r}.")
        if not isinstance(self.copy_ngram, int) or self.copy_ngram < 1:
            raise ValueError(f"copy_ngram must be a positive int, got {self.copy_ngram!r}.")
        if not 0.0 <= self.max_copied_fraction <= 1.0:
            raise ValueError(f"max_copied_fraction must be within [0, 1] (1.0 disables the copy check), got {self.max_copied_fraction!r}.")
        if not isinstance(self.weights, RewardWeights):
            raise TypeError("LevelConfig.weights must be a RewardWeights; use RewardWeights.coerce({...}).")

    def with_weights(self, weights: RewardWeights | Mapping[str, float]) -> LevelConfig:
        return dataclasses.replace(self, weights=RewardWeights.coerce(weights))


TLDR_LEVELS = LevelConfig(
    first_words=(8, 100),
    second_words=(16, 300),
    length_ratio=Band(1.1, 1.6, 3.2, 5.0),
    # A good detailed summary adds what the TL;DR leaves out, so the two may share few words
    # (an author's TL;DR shares no content word with a random 60-word stretch of its own post in
    # 13 % of the posts): too little overlap only loses credit; repetition (above 0.60) fails.
    overlap=Band(0.0, 0.05, 0.35, 0.60),
)
"""``tldr-v0``: short summary 8–100 words, detailed one 16–300 words and 1.6–3.2× as long."""

ARXIV_LEVELS = LevelConfig(
    first_words=(80, 300),
    second_words=(80, 300),
    length_ratio=Band(0.5, 0.8, 1.25, 2.0),
    # Two halves of one introduction share its key terms: the halves of real abstracts have
    # J >= 0.065 in 95 % of cases, halves of different abstracts J < 0.03 in 75 %.
    overlap=Band(0.03, 0.08, 0.35, 0.60),
)
"""``arxiv_intro-v0``: both parts 80–300 words and of similar length (0.8–1.25×)."""
