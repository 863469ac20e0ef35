"""What a text says about its source: which of the source's content words it uses and covers.

The source's content words (Porter stems, stopwords and numbers removed) are weighted by how
specific they are to this source among all rows of the data file (inverse document frequency), so
words every post or abstract uses ("people", "results", "paper") count little and the words that
name this source's subject count most. All functions take any strings and never raise.

- **on-source share** of a text: the share of its content words that occur in the source. Text
  written about another source, a generic template or another language has a low share.
- **coverage** of a text: the share of the source's weighted content that the text mentions.
- **added coverage** of a second text over a first: the share of the second text's source
  coverage that the first text does not have.
- **in-order share** of a text: the share of its words found in the source in the same order,
  which catches the source copied with words left out (the 4-gram copy gate misses that).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lexicon import STOPWORDS


@dataclasses.dataclass(frozen=True)
class Salience:
    """Inverse document frequency of content stems over the rows of one data file."""

    document_frequency: Mapping[str, int]
    documents: int

    @classmethod
    def from_sources(cls, sources: Iterable[str]) -> Salience:
        counts: Counter[str] = Counter()
        documents = 0
        for source in sources:
            counts.update(tm.content_stems(tm.words(source)))
            documents += 1
        return cls(dict(counts), documents)

    def weight(self, stem: str) -> float:
        """log((N + 1) / (df + 1)) + 1: about 1 for a word in every row, log(N) + 1 for a rare one."""
        return math.log((self.documents + 1) / (self.document_frequency.get(stem, 0) + 1)) + 1.0


@dataclasses.dataclass(frozen=True)
class SourceProfile:
    """A source's words and its content stems weighted by salience."""

    weights: Mapping[str, float]
    salience: Salience
    tokens: tuple[str, ...]

    @classmethod
    def build(cls, source: str, salience: Salience) -> SourceProfile:
        tokens = tm.words(source)
        return cls({s: salience.weight(s) for s in tm.content_stems(tokens)}, salience, tuple(tokens))

    def mass(self, stems: Iterable[str]) -> float:
        # fsum is exact, so the result does not depend on the order a set is iterated in (which
        # changes with PYTHONHASHSEED): a plain sum made equal masses differ in the last bit and a
        # share of exactly 1.0 come out above the bands' upper bound.
        return math.fsum(self.weights.get(s, 0.0) for s in stems)


def on_source_share(text_stems: set[str], profile: SourceProfile) -> float:
    """Weighted share of the text's content stems found in the source (0.0 for a text without any)."""
    total = math.fsum(profile.salience.weight(s) for s in text_stems)
    return profile.mass(text_stems) / total if total else 0.0


def coverage(text_stems: set[str], profile: SourceProfile) -> float:
    """Share of the source's weighted content stems that the text mentions."""
    total = profile.mass(profile.weights)
    return profile.mass(text_stems) / total if total else 0.0


def added_coverage(first_stems: set[str], second_stems: set[str], profile: SourceProfile) -> float:
    """Share of the second text's source coverage (by weight) that the first text lacks."""
    second = second_stems & profile.weights.keys()
    mass = profile.mass(second)
    return profile.mass(second - first_stems) / mass if mass else 0.0


def function_word_share(tokens: Sequence[str]) -> float:
    """Share of tokens that are stopwords: 0.35–0.55 in prose, near 0 in a list of keywords."""
    return sum(t in STOPWORDS for t in tokens) / len(tokens) if tokens else 0.0


def in_order_share(tokens: Sequence[str], source_tokens: Sequence[str]) -> float:
    """Share of the text's words that appear in the source in the same order (longest common
    subsequence / text length): 0.4–0.6 for a summary in its own words, 1.0 for the source with
    words left out."""
    return lcs_length(tokens, source_tokens) / len(tokens) if tokens else 0.0


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel over ``b`` (Hyyrö's formulation)."""
    masks: dict[str, int] = {}
    for i, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(b)) - 1
    row = full
    for token in a:
        matched = row & masks.get(token, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(b) - bin(row).count("1")
