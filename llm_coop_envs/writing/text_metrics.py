"""Pure text measurements used by the writing rewards.

All functions take any string (empty, huge, binary junk) and never raise. Words are runs of
letters and digits (``\\w+``, Unicode-aware, apostrophes kept inside words), lower-cased; this is
nltk's :class:`~nltk.tokenize.RegexpTokenizer`, which needs no downloaded data (``word_tokenize``
and ``sent_tokenize`` need the punkt model, which is not installed offline).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence

from nltk.stem import PorterStemmer
from nltk.tokenize import RegexpTokenizer

from llm_coop_envs.writing.lexicon import STOPWORDS, TRANSITIONS

_WORDS = RegexpTokenizer(r"\w+(?:'\w+)*")
_STEMMER = PorterStemmer()


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text``."""
    return [w.replace("'", "") for w in _WORDS.tokenize(text.lower())]


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of one word (cached: the same words recur across replies)."""
    if len(word) > 40:  # no real word is this long; the stemmer is slow on junk
        return word
    return _STEMMER.stem(word)


def content_stems(tokens: Sequence[str]) -> set[str]:
    """Stems of the tokens that are not stopwords or pure numbers."""
    return {stem(t) for t in tokens if t not in STOPWORDS and not t.isdigit() and len(t) > 1}


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty (two empty texts share nothing)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def distinct_ratio(tokens: Sequence[str]) -> float:
    """Share of distinct tokens: near 1/n for one word repeated, 0.5–0.9 for ordinary prose."""
    return len(set(tokens)) / len(tokens) if tokens else 0.0


def repeated_phrase_share(tokens: Sequence[str], n: int) -> float:
    """Share of the tokens inside an ``n``-token phrase the text says more than once: 0 for prose that
    never repeats itself, most of a text that loops on a sentence (even with a word changed per turn,
    which a distinct-word ratio barely sees)."""
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    counts = collections.Counter(grams)
    covered = set()
    for start, gram in enumerate(grams):
        if counts[gram] > 1:
            covered.update(range(start, start + n))
    return len(covered) / len(tokens) if tokens else 0.0


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def copied_fraction(tokens: Sequence[str], source_ngrams: set[tuple[str, ...]], n: int) -> float:
    """Share of the reply's word n-grams that also occur in the source (0 for replies shorter than n)."""
    own = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    if not own:
        return 0.0
    return sum(gram in source_ngrams for gram in own) / len(own)


def _phrase_index() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """First word → [(phrase words, category)], longest phrases first (greedy longest match)."""
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for category, phrases in TRANSITIONS.items():
        for phrase in phrases:
            parts = tuple(phrase.split())
            index.setdefault(parts[0], []).append((parts, category))
    for entries in index.values():
        entries.sort(key=lambda entry: -len(entry[0]))
    return index


_PHRASES = _phrase_index()


def transitions(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """Transition phrases in the token list as ``(phrase, category)``, matched as whole words.

    Matches do not overlap: at each position the longest phrase wins ("most importantly" is one
    match, not two), so a phrase is never counted inside another word or phrase.
    """
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        for parts, category in _PHRASES.get(tokens[i], ()):
            if tuple(tokens[i : i + len(parts)]) == parts:
                found.append((" ".join(parts), category))
                i += len(parts)
                break
        else:
            i += 1
    return found
