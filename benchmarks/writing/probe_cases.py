"""Reward-hacking probes: each turns a genuine pair, its source or nothing at all into a cheap imitation.

A probe is what a policy searching for reward could write instead of a faithful pair. Each takes a
:class:`Case` (the genuine pair and the source it was written for, plus another problem's genuine
pair) and returns the two texts in role order. The benchmark ``benchmarks/writing/probes.py`` prints
the table of probes x mean score that the docs show.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lexicon import STOPWORDS

Pair = tuple[str, str]
SPAM = "However, moreover, therefore, in addition, for example, as a result, in conclusion, similarly,"


@dataclasses.dataclass(frozen=True)
class Case:
    env: str
    """``"tldr"`` or ``"arxiv"``."""
    genuine: Pair
    source: str
    title: str
    other: Pair
    """The genuine pair of another problem (written for a different source)."""


# Fixed pairs written once, about no source in particular: fluent, with connectives of several kinds.
GENERIC = {
    "tldr": (
        "I am in a difficult situation with someone close to me and I do not know what to do next.",
        "The poster describes a difficult situation with a person who matters a lot to them. However, the "
        "two of them see the problem differently, and talking about it has not helped so far. As a result, "
        "the poster feels stuck and unsure whether to keep trying or to step back. For example, they worry "
        "about hurting the other person, so they ask for honest advice from people who have been in a "
        "similar position.",
    ),
    "arxiv": (
        "Understanding complex systems is one of the central goals of modern science, and progress often "
        "depends on combining careful theory with precise measurements. However, many important questions "
        "remain open, because existing models rely on simplifying assumptions that do not always hold in "
        "practice. For example, effects that are neglected in standard treatments can become important in "
        "new regimes, and they may change the interpretation of earlier results. As a result, there is a "
        "strong motivation to revisit the problem with improved tools and a clearer picture of the "
        "underlying mechanisms.",
        "In this work, the authors develop a new approach that addresses these limitations and apply it to "
        "a representative set of cases. Moreover, they compare their predictions with available data and "
        "with previous calculations, and they discuss the sources of uncertainty in detail. As a result, "
        "the study shows that the new framework reproduces known behaviour while revealing effects that "
        "earlier methods missed. Consequently, the findings provide a basis for future experiments and "
        "simulations, and they suggest several directions in which the analysis could be extended.",
    ),
}

# A real translation, written for the tests, of the first genuine pair of each env (t3_23za1b, 0704.0460).
GERMAN = {
    "t3_23za1b": (
        "Meine Freundin will für eine gemeinnützige Organisation arbeiten und mag kein Geld; ich will Karriere "
        "machen. Wie können wir das überbrücken?",
        "Er ist 23 Jahre alt, arbeitet in einem Büro und möchte seine beruflichen Ziele verfolgen; für sie hat er "
        "einen Umzug schon aufgeschoben. Seine 20-jährige Freundin, mit der er seit zweieinhalb Jahren zusammen "
        "ist, ist jedoch idealistisch, möchte bei einer gemeinnützigen Organisation arbeiten und lehnt Geld und "
        "unnötige Käufe ab. Deshalb ist er es leid, darauf zu warten, dass ihre Welten zusammenfinden.",
    ),
    "0704.0460": (
        "Transitplaneten bieten die seltene Gelegenheit, den Radius einer Welt außerhalb des Sonnensystems zu "
        "messen, und helle Sterne sind besonders wertvoll, weil sie genaue Nachbeobachtungen mit Spektroskopie "
        "erlauben. Solche Sterne sind jedoch dünn über den ganzen Himmel verteilt, sodass eine Durchmusterung "
        "sehr große Flächen lange beobachten muss. Große Teleskope haben kleine Gesichtsfelder und sind teuer, "
        "deshalb eignen sie sich schlecht für diese Art der Überwachung. Aus diesem Grund lohnt es sich, kleine, "
        "billige und automatische Instrumente zu bauen, die jede Nacht tausende Quadratgrad abdecken.",
        "Die Arbeit stellt KELT vor, ein kleines robotisches Weitwinkelteleskop am Winer-Observatorium in "
        "Arizona, das Felder von 26 mal 26 Grad beobachtet, zusammen etwa ein Viertel des nördlichen Himmels. "
        "Es sucht bei Sternen der achten bis zehnten Größe nach nahen Begleitern von der Größe Jupiters. Die "
        "Autoren beschreiben die Hardware, die Steuersoftware und die Datenverarbeitung und prüfen die Qualität "
        "der Lichtkurven. Folglich zeigen sie, dass das System die nötige Genauigkeit erreicht, um Transits bei "
        "sonnenähnlichen Sternen zu finden, und dass billige Roboter große Himmelsdurchmusterungen leisten können.",
    ),
}

_SYNONYMS = {
    "wants": "wishes", "girlfriend": "partner", "boyfriend": "partner", "job": "position", "money": "cash",
    "awkward": "uncomfortable", "asked": "invited", "ask": "request", "friend": "companion", "dog": "pet",
    "afford": "pay for", "break": "split", "relationship": "romance", "loves": "adores", "hurt": "harm",
    "paper": "article", "measure": "determine", "measured": "determined", "model": "framework", "study": "work",
    "results": "findings", "shows": "demonstrates", "show": "demonstrate", "new": "novel", "large": "big",
    "small": "little", "field": "area", "problem": "question", "method": "technique", "uses": "employs",
    "authors": "researchers", "find": "discover", "found": "discovered", "strong": "intense", "high": "elevated",
}


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+", text.strip()) if s]


def salient_words(case: Case, n: int) -> list[str]:
    """The source's content words in order of first appearance, without repeats (a keyword list)."""
    seen, out = set(), []
    for word in tm.words(case.source):
        if word not in STOPWORDS and not word.isdigit() and len(word) > 2 and word not in seen:
            seen.add(word)
            out.append(word)
    return (out * (n // max(1, len(out)) + 1))[:n] if out else ["word"] * n


def _lengths(case: Case) -> tuple[int, int]:
    return len(tm.words(case.genuine[0])), len(tm.words(case.genuine[1]))


def keyword_soup(case: Case) -> Pair:
    a, b = _lengths(case)
    soup = salient_words(case, a + b)
    return " ".join(soup[:a]), " ".join(soup[a:])


def keyword_soup_with_transitions(case: Case) -> Pair:
    connectives = ["however", "as a result", "for example", "moreover", "in conclusion"]
    texts = []
    for text in keyword_soup(case):
        words = text.split()
        texts.append(" ".join(f"{connectives[i // 8 % 5]}, {w}" if i % 8 == 0 else w for i, w in enumerate(words)))
    return texts[0], texts[1]


def keyword_soup_with_function_words(case: Case) -> Pair:
    """Source keywords glued with rotating function words and connectives: grammar-free, fluent-looking."""
    glue = ["the", "of", "and", "in", "with", "to", "for", "is", "a", "that", "on", "by", "was", "it", "as"]
    connectives = ["However,", "As a result,", "For example,", "Moreover,"]
    out = []
    for text in keyword_soup(case):
        words = text.split()
        parts = []
        for i, w in enumerate(words):
            if i % 10 == 0:
                parts.append(("." if i else "") + f" {connectives[i // 10 % 4]}")
            parts.append(f"{glue[i % len(glue)]} {w}")
        out.append(" ".join(parts).strip() + ".")
    return out[0], out[1]


def template_with_keywords(case: Case) -> Pair:
    """The generic pair with the source's title and first keywords slotted in."""
    first, second = GENERIC[case.env]
    keys = ", ".join(salient_words(case, 6))
    return (
        f"{first} It is about {case.title or keys}.",
        f"{second} The key points are {keys}.",
    )


def shuffled_together(case: Case, seed: int = 0) -> Pair:
    """The sentences of both genuine texts shuffled together and dealt back at the original lengths
    (drawn again while the deal gives back the genuine pair)."""
    rng = random.Random(seed)
    for _ in range(100):
        pool = sentences(case.genuine[0]) + sentences(case.genuine[1])
        rng.shuffle(pool)
        target, first = len(tm.words(case.genuine[0])), []
        while pool and len(tm.words(" ".join(first))) < target:
            first.append(pool.pop())
        pair = (" ".join(first), " ".join(pool))
        if _changed(pair, case.genuine):
            break
    return pair


def shuffled_within(case: Case, seed: int = 1) -> Pair:
    """Each genuine text with its sentences in a random order (drawn again while no text changed)."""
    rng = random.Random(seed)
    for _ in range(100):
        out = []
        for text in case.genuine:
            parts = sentences(text)
            rng.shuffle(parts)
            out.append(" ".join(parts))
        pair = (out[0], out[1])
        if _changed(pair, case.genuine):
            break
    return pair


def _changed(pair: Pair, genuine: Pair) -> bool:
    return [sentences(t) for t in pair] != [sentences(t) for t in genuine]


SHUFFLE_SEEDS = range(5)
"""The shuffle probes run with each of these seeds, so no test rests on one lucky permutation."""


def synonyms(text: str) -> str:
    return " ".join(_SYNONYMS.get(w.lower(), w) for w in text.split())


def repeated_with_synonyms(case: Case) -> Pair:
    """The first text, then the second role restates it twice with a few words swapped for synonyms."""
    first = case.genuine[0]
    return first, f"{synonyms(first)} In other words, {synonyms(first)[0].lower()}{synonyms(first)[1:]}"


def title_repeated(case: Case) -> Pair:
    title = case.title or " ".join(salient_words(case, 8))
    return " ".join([title] * 3), " ".join([title] * 8)


def source_with_words_dropped(case: Case) -> Pair:
    """The source with every third word left out: no 4-word sequence survives, so the copy gate misses it."""
    words = case.source.split()
    kept = [w for i, w in enumerate(words) if i % 3 != 2]
    a, b = _lengths(case)
    return " ".join(kept[:a]), " ".join(kept[a : a + b])


def _stuff_transitions(text: str) -> str:
    """Put a run of transition phrases in front of every sentence."""
    return " ".join(f"{SPAM} {s[0].lower()}{s[1:]}" for s in sentences(text))


def _halves(text: str) -> Pair:
    words = text.split()
    cut = max(1, len(words) // 3)
    return " ".join(words[:cut]), " ".join(words[cut:])


PROBES: dict[str, Callable[[Case], Pair]] = {
    "empty": lambda c: ("", ""),
    "whitespace": lambda c: ("  \n", "\t "),
    "same text twice (first)": lambda c: (c.genuine[0], c.genuine[0]),
    "same text twice (second)": lambda c: (c.genuine[1], c.genuine[1]),
    "one word repeated": lambda c: ("summary " * 30, "summary " * 90),
    "one sentence repeated": lambda c: (c.genuine[0], " ".join([c.genuine[0]] * 3)),
    "transition spam only": lambda c: (SPAM * 2, SPAM * 5),
    "transition-stuffed genuine": lambda c: (_stuff_transitions(c.genuine[0]), _stuff_transitions(c.genuine[1])),
    "source copied back": lambda c: (c.source, c.source),
    "source split in two": lambda c: _halves(c.source),
    "genuine first + source": lambda c: (c.genuine[0], c.source),
    "source with every third word dropped": source_with_words_dropped,
    "generic template pair": lambda c: GENERIC[c.env],
    "template with title and keywords": template_with_keywords,
    "pair written for another source": lambda c: c.other,
    "genuine first + another source's second": lambda c: (c.genuine[0], c.other[1]),
    "generic first + genuine second": lambda c: (GENERIC[c.env][0], c.genuine[1]),
    "keyword soup from the source": keyword_soup,
    "keyword soup + transitions": keyword_soup_with_transitions,
    "keyword soup + function words": keyword_soup_with_function_words,
    "roles swapped": lambda c: (c.genuine[1], c.genuine[0]),
    "first text repeated with synonyms": repeated_with_synonyms,
    "title repeated": title_repeated,
    "pair in another language (German)": lambda c: GERMAN["t3_23za1b" if c.env == "tldr" else "0704.0460"],
}
"""Every probe must score clearly below the genuine pair of the same problem."""

SHUFFLES: dict[str, Callable[[Case, int], Pair]] = {
    "shuffled sentences (both texts pooled)": shuffled_together,
    "sentences shuffled within each text": shuffled_within,
}
"""Sentence-order probes, run with every seed of :data:`SHUFFLE_SEEDS`: asserted from ``-v2`` on;
``-v1`` does not check sentence order (a known limit, reported in the docs table)."""
