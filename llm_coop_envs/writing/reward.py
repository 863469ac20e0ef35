"""The gated reward levels: structure → style consistency → coherence (and ROUGE for TL;DR).

A level that fails stops the scoring: later levels score 0 and are not computed. Level scores are
in [0, 1]; the reward components are these scores times the configured weights.

1. **structure**: gates, then the length ratio. Gates (any failing gives structure 0 and stops,
   and ROUGE is not scored): each text's word count within its bounds; each text not degenerate
   (distinct words ≥ ``min_distinct_ratio`` of its words); each text not copied from the source
   (≤ ``max_copied_fraction`` of its word ``copy_ngram``-grams found in the source). Then the ratio
   r = words(second) / words(first): structure = 0.5 + 0.5 × band(r); outside the accepted band
   structure is 0.5 and scoring stops.
2. **style**: Jaccard similarity J of the two texts' content-word stems. style = band(J); outside
   the accepted band (too little shared vocabulary, or repetition) style is 0 and scoring stops.
3. **coherence**: transition phrases (whole-word matches) in the joint text. coherence =
   category_scores[number of distinct categories, capped] × density_band(matches per word); no
   transition, or a density above the band, fails the level.

From ``-v1`` on the structure gates also reject keyword lists (too few function words) and copies
with words left out (in-order share), and two levels about the source run between structure and
style (:mod:`.source_levels`): grounding, then complementarity. The levels after grounding are
multiplied by the grounding score: fluent, well-divided text earns only as much as it is about
its source.

From ``-v2`` on the coherence level first checks the sentence order (:mod:`.order`): a text that
opens with a connective needing a previous sentence, or a retelling whose sentences clearly run
against the source's order, fails it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.thresholds import LevelConfig
from llm_coop_envs.writing.grounding import SourceProfile, function_word_share, in_order_share
from llm_coop_envs.writing.order import order_problems
from llm_coop_envs.writing.outcome import LevelOutcome
from llm_coop_envs.writing.rouge import rouge_mean
from llm_coop_envs.writing.source_levels import complementarity_level, grounding_level

LEVELS = ("structure", "style", "coherence")
"""The levels of the ``-v0`` configs; :meth:`LevelConfig.level_names` gives a config's own."""


@dataclasses.dataclass(frozen=True)
class PairScore:
    """The verdict on a pair of texts: the levels reached, ROUGE and the raw measurements."""

    levels: tuple[LevelOutcome, ...]
    rouge: float | None
    """ROUGE mean F1 against the reference; None when not scored (gates failed or no reference)."""
    metrics: dict[str, Any]
    names: tuple[str, ...] = LEVELS
    """Every level of the config, reached or not."""
    gated: bool = False
    """A structure gate failed (from ``-v4`` on such a pair may still earn a small structure credit)."""

    def level_scores(self) -> dict[str, float]:
        reached = {outcome.name: outcome.score for outcome in self.levels}
        return {name: reached.get(name, 0.0) for name in self.names}

    @property
    def gates_passed(self) -> bool:
        """The structure gates passed (the length ratio may still have failed)."""
        return not self.gated

    @property
    def solved(self) -> bool:
        """Every level reached and at full credit."""
        return len(self.levels) == len(self.names) and all(o.passed and o.score == 1.0 for o in self.levels)


@dataclasses.dataclass(frozen=True)
class PairTexts:
    """The two replies with their roles, and the source they were written from."""

    roles: tuple[str, str]
    texts: tuple[str, str]
    source: str
    source_name: str
    """What the source is called in feedback ("post", "abstract")."""
    profile: SourceProfile | None = None
    """The source's weighted content words; needed by configs with a grounding level."""


def score_pair(pair: PairTexts, config: LevelConfig, reference: str | None = None) -> PairScore:
    """Run the levels in order, stopping at the first failure. Never raises for any strings."""
    tokens = (tm.words(pair.texts[0]), tm.words(pair.texts[1]))
    metrics: dict[str, Any] = {"words": {role: len(t) for role, t in zip(pair.roles, tokens)}}
    names = config.level_names()
    gate = _structure_gates(pair, tokens, config, metrics)
    if gate is not None:
        return PairScore((gate,), None, metrics, names, gated=True)
    rouge = None
    if reference is not None and reference.strip():
        rouge = rouge_mean(pair.texts[0], reference)
        metrics["rouge"] = round(rouge, 4)
    later = {
        "grounding": lambda: grounding_level(pair.roles, tokens, _profile(pair), config, metrics, pair.source_name),
        "complementarity": lambda: complementarity_level(pair.roles, tokens, _profile(pair), config, metrics, pair.source_name),
        "style": lambda: style_level(pair, tokens, config, metrics),
        "coherence": lambda: _order(pair, config, metrics) or coherence_level(tokens, config, metrics),
    }
    levels = [length_ratio_level(pair, tokens, config, metrics)]
    grounded = 1.0
    for name in names[1:]:
        if not levels[-1].passed:
            break
        outcome = later[name]()
        if grounded < 1.0:
            # Well-linked, well-divided text earns only as much as it is about its source.
            outcome = dataclasses.replace(
                outcome, score=outcome.score * grounded, message=f"{outcome.message} (× grounding {grounded:.2f})"
            )
        if name == "grounding":
            grounded = outcome.score
        levels.append(outcome)
    return PairScore(tuple(levels), rouge, metrics, names)


def gates_passed_by_role(pair: PairTexts, config: LevelConfig) -> dict[str, bool]:
    """Whether each role's own text passes the structure gates (word count, not degenerate, prose,
    not copied): the part of the levels that belongs to one text alone (per-agent rewards)."""
    passed = {}
    for role, text, (low, high) in zip(pair.roles, pair.texts, (config.first_words, config.second_words)):
        words = tm.words(text)
        alone = dataclasses.replace(pair, roles=(role,), texts=(text,))
        passed[role] = low <= len(words) <= high and not (
            _degenerate((role,), (words,), config, {}) or _not_prose((role,), (words,), config, {})
            or _copied(alone, (words,), config, {})
        )
    return passed


def _profile(pair: PairTexts) -> SourceProfile:
    if pair.profile is None:
        raise ValueError("This LevelConfig has a grounding level: PairTexts needs the source's profile (SourceProfile.build).")
    return pair.profile


def _structure_gates(pair: PairTexts, tokens, config: LevelConfig, metrics: dict) -> LevelOutcome | None:
    problems = []
    for role, words, (low, high) in zip(pair.roles, tokens, (config.first_words, config.second_words)):
        if not low <= len(words) <= high:
            problems.append(f"the {role} text has {len(words)} words; it needs {low}–{high}")
    if not problems:
        problems = (
            _degenerate(pair.roles, tokens, config, metrics)
            or _not_prose(pair.roles, tokens, config, metrics)
            or _copied(pair, tokens, config, metrics)
        )
    if not problems:
        return None
    return LevelOutcome("structure", 0.0, False, "Structure failed: " + "; ".join(problems) + ".")


def _degenerate(roles, tokens, config: LevelConfig, metrics: dict) -> list[str]:
    ratios = {role: tm.distinct_ratio(words) for role, words in zip(roles, tokens)}
    metrics["distinct_ratio"] = {role: round(r, 4) for role, r in ratios.items()}
    return [
        f"the {role} text repeats itself (only {ratio:.0%} of its words are distinct; at least "
        f"{config.min_distinct_ratio:.0%} needed)"
        for role, ratio in ratios.items()
        if ratio < config.min_distinct_ratio
    ]


def _not_prose(roles, tokens, config: LevelConfig, metrics: dict) -> list[str]:
    if config.min_function_word_share <= 0.0:
        return []
    shares = {role: function_word_share(words) for role, words in zip(roles, tokens)}
    metrics["function_word_share"] = {role: round(s, 4) for role, s in shares.items()}
    return [
        f"the {role} text is a list of keywords, not sentences (function words are {share:.0%} of its words; "
        f"at least {config.min_function_word_share:.0%} needed)"
        for role, share in shares.items()
        if share < config.min_function_word_share
    ]


def _copied(pair: PairTexts, tokens, config: LevelConfig, metrics: dict) -> list[str]:
    n = config.copy_ngram
    source_tokens = tm.words(pair.source)
    source_grams = tm.ngrams(source_tokens, n)
    fractions = {role: tm.copied_fraction(words, source_grams, n) for role, words in zip(pair.roles, tokens)}
    metrics["copied_fraction"] = {role: round(f, 4) for role, f in fractions.items()}
    problems = [
        f"the {role} text copies the {pair.source_name} ({fraction:.0%} of its {n}-word sequences appear "
        f"there; at most {config.max_copied_fraction:.0%} allowed): write in your own words"
        for role, fraction in fractions.items()
        if fraction > config.max_copied_fraction
    ]
    if problems or config.max_in_order_share >= 1.0:
        return problems
    in_order = {role: in_order_share(words, source_tokens) for role, words in zip(pair.roles, tokens)}
    metrics["in_order_share"] = {role: round(f, 4) for role, f in in_order.items()}
    return [
        f"the {role} text copies the {pair.source_name} with words left out ({share:.0%} of its words appear "
        f"there in the same order; at most {config.max_in_order_share:.0%} allowed): write in your own words"
        for role, share in in_order.items()
        if share > config.max_in_order_share
    ]


def length_ratio_level(pair: PairTexts, tokens, config: LevelConfig, metrics: dict) -> LevelOutcome:
    ratio = len(tokens[1]) / len(tokens[0])
    metrics["length_ratio"] = round(ratio, 4)
    band = config.length_ratio
    what = f"length ratio {pair.roles[1]}/{pair.roles[0]} = {ratio:.2f} words ({band.describe()})"
    if not band.contains(ratio):
        return LevelOutcome("structure", 0.5, False, f"Structure failed: {what}.")
    score = 0.5 + 0.5 * band.score(ratio)
    return LevelOutcome("structure", score, True, f"Structure passed: {what}.")


def style_level(pair: PairTexts, tokens, config: LevelConfig, metrics: dict) -> LevelOutcome:
    similarity = tm.jaccard(tm.content_stems(tokens[0]), tm.content_stems(tokens[1]))
    metrics["overlap"] = round(similarity, 4)
    band = config.overlap
    what = f"vocabulary overlap (Jaccard of content words) = {similarity:.2f} ({band.describe()})"
    if similarity < band.low:
        return LevelOutcome("style", 0.0, False, f"Style failed: {what}: the two texts hardly share a topic.")
    if similarity > band.high:
        return LevelOutcome("style", 0.0, False, f"Style failed: {what}: the two texts repeat each other.")
    hint = ""
    if similarity < band.ideal_low:
        hint = ": the texts should share more of their key terms"
    elif similarity > band.ideal_high:
        hint = ": the texts repeat each other; add what the other leaves out"
    return LevelOutcome("style", band.score(similarity), True, f"Style passed: {what}{hint}.")


def _order(pair: PairTexts, config: LevelConfig, metrics: dict) -> LevelOutcome | None:
    """The coherence level failed for sentences out of order (``-v2`` on), or None to go on scoring it."""
    if config.order is None:
        return None
    problems = order_problems(pair.roles, pair.texts, pair.source, _profile(pair), config.order, metrics)
    if not problems:
        return None
    return LevelOutcome("coherence", 0.0, False, "Coherence failed: " + "; ".join(problems) + ": keep the sentences in a logical order.")


def coherence_level(tokens, config: LevelConfig, metrics: dict) -> LevelOutcome:
    joint = list(tokens[0]) + ["\n"] + list(tokens[1])  # the separator stops phrases spanning both texts
    found = tm.transitions(joint)
    categories = sorted({category for _, category in found})
    density = len(found) / (len(tokens[0]) + len(tokens[1]))
    metrics.update(transitions=[phrase for phrase, _ in found][:50], categories=categories, transition_density=round(density, 4))
    band = config.transition_density
    what = (
        f"{len(found)} transition phrases in {len(categories)} categories"
        f"{' (' + ', '.join(categories) + ')' if categories else ''}, density {density:.3f} per word"
        f" (at most {band.ideal_high:.2f} for full credit, {band.high:.2f} accepted)"
    )
    if not found:
        return LevelOutcome("coherence", 0.0, False, f"Coherence failed: {what}: link ideas with transitions.")
    if not band.contains(density):
        return LevelOutcome("coherence", 0.0, False, f"Coherence failed: {what}: too many transitions.")
    by_count = config.category_scores[min(len(categories), len(config.category_scores) - 1)]
    score = by_count * band.score(density)
    hint = ""
    if by_count < 1.0:
        hint = ": link ideas with transitions of more kinds (contrast, cause and effect, example, ...)"
    elif density > band.ideal_high:
        hint = ": use fewer transitions"
    return LevelOutcome("coherence", score, True, f"Coherence passed: {what}{hint}.")
