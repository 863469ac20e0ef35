"""Sentence order, measured from the source without a model.

A summary or an introduction tells its source's content in roughly the source's order, and a text
that opens with a connective such as "However," or "As a result," refers to a sentence that is not
there. Both are cheap to see and both break when the sentences of a good pair are shuffled:

- **alignment**: each sentence of a reply is placed at the source sentence that shares the most of
  its content words (weighted by salience, as grounding weighs them); a sentence that shares less
  than ``min_share`` of its own weighted content with any source sentence is unaligned (context the
  source does not have) and is left out.
- **concordance** of a text: over the pairs of its aligned sentences placed at different source
  sentences, (in order − out of order) / pairs, i.e. Kendall's tau between reply order and source
  order: 1.0 in source order, -1.0 reversed, about 0 shuffled.
- **dangling opening**: the text's first sentence opens with a connective that needs a sentence
  before it (:data:`DANGLING_OPENERS`).

All functions take any strings and never raise.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.thresholds import OrderCheck
from llm_coop_envs.writing.grounding import SourceProfile

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*[-*•\d])")

DANGLING_OPENERS: tuple[tuple[str, ...], ...] = tuple(
    tuple(phrase.split())
    for phrase in (
        "however", "moreover", "furthermore", "additionally", "in addition", "besides", "also", "therefore",
        "consequently", "as a result", "as a consequence", "hence", "thus", "accordingly", "because of this",
        "for this reason", "nevertheless", "nonetheless", "even so", "on the other hand", "in contrast",
        "by contrast", "on the contrary", "conversely", "instead", "similarly", "likewise", "in the same way",
        "meanwhile", "afterwards", "afterward", "subsequently", "since then", "after that", "later on",
        "in other words", "for example", "for instance", "in conclusion", "to conclude",
        "in summary", "to summarize", "to sum up", "lastly",
        # pronouns that stand for something named before: none of the 2,130 posts, author TL;DRs and
        # abstracts opens with one ("it", "this", "these" and "he"/"she" open real texts, so they are not here)
        "they", "its", "their",
    )
)
"""Sentence openings that refer back to a previous sentence (matched as whole words at the start of
a text's first sentence; a connective inside a sentence, "he says, however, ...", is not an opening)."""

_COMMA_OPENERS = re.compile(r"\W*(finally|then|still|again|next|second|secondly|third|thirdly),", re.IGNORECASE)
"""Openers that refer back only when a comma follows ("Finally, ..." but "Finally got a job")."""


def split_sentences(text: str) -> list[str]:
    """Sentences: split after . ! ? followed by space, and at blank lines and list items."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s and s.strip()]


@dataclasses.dataclass(frozen=True)
class SourceSentences:
    """The source's sentences as sets of content stems, in source order."""

    stems: tuple[frozenset[str], ...]

    @classmethod
    def build(cls, source: str) -> SourceSentences:
        return cls(tuple(frozenset(tm.content_stems(tm.words(s))) for s in split_sentences(source)))


def aligned_positions(text: str, source: SourceSentences, profile: SourceProfile, min_share: float) -> list[int]:
    """The source sentence each aligned sentence of the text is placed at, in the text's order."""
    positions = []
    for sentence in split_sentences(text):
        stems = tm.content_stems(tm.words(sentence))
        own = math.fsum(profile.salience.weight(s) for s in stems)
        if not own or not source.stems:
            continue
        shared = [profile.mass(stems & candidate) for candidate in source.stems]
        best = max(range(len(shared)), key=shared.__getitem__)  # the first of equal ones
        if shared[best] / own >= min_share:
            positions.append(best)
    return positions


def concordance_counts(positions: Sequence[int]) -> tuple[int, int]:
    """(pairs in source order, pairs out of order); pairs placed at the same source sentence are ties."""
    ordered = reversed_ = 0
    for i, a in enumerate(positions):
        for b in positions[i + 1 :]:
            ordered += a < b
            reversed_ += a > b
    return ordered, reversed_


def dangling_opener(text: str) -> str | None:
    """The connective the text opens with when it needs a previous sentence, else None."""
    head = tm.words(text[:200])
    for phrase in DANGLING_OPENERS:
        if tuple(head[: len(phrase)]) == phrase:
            return " ".join(phrase)
    match = _COMMA_OPENERS.match(text[:200])
    return match.group(1).lower() if match else None


def concordance(text: str, source: SourceSentences, profile: SourceProfile, min_share: float) -> tuple[float | None, int]:
    """(Kendall's tau of the text's aligned sentences against the source order, pairs it rests on);
    tau is None when no pair of aligned sentences sits at different source sentences."""
    ordered, reversed_ = concordance_counts(aligned_positions(text, source, profile, min_share))
    pairs = ordered + reversed_
    return ((ordered - reversed_) / pairs if pairs else None), pairs


def order_problems(roles, texts, source: str, profile: SourceProfile, check: OrderCheck, metrics: dict) -> list[str]:
    """What is out of order in the pair (empty when nothing is); 

    Every text's opening is checked; the concordance only of the second text, which retells the
    source (a TL;DR or a background paragraph need not follow the source's order)."""
    openers = {role: dangling_opener(text) for role, text in zip(roles, texts)}
    tau, pairs = concordance(texts[1], SourceSentences.build(source), profile, check.min_share)
    metrics["order"] = {
        "dangling_opener": {role: opener for role, opener in openers.items() if opener},
        "concordance": None if tau is None else round(tau, 4),
        "aligned_pairs": pairs,
    }
    problems = [
        f'the {role} text opens with "{opener}", which needs a sentence before it' for role, opener in openers.items() if opener
    ]
    if tau is not None and pairs >= check.min_pairs and tau <= check.max_reversed:
        problems.append(
            f"the {roles[1]} text tells the source's points in scrambled order (concordance with the source's "
            f"order {tau:+.2f} over {pairs} sentence pairs; above {check.max_reversed:+.2f} needed)"
        )
    return problems
