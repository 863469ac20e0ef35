"""The ``-v5`` writing reward: normalised text, each text's gates defined once, claims checked against the source.

The chain of ``-v4`` (:mod:`.lm_levels`) with three changes:

- **one normal form**: both texts and the source are normalised once (:func:`.normalise.fold`); the same
  text feeds every gate, the claim check and the language model;
- **one definition of each gate** (:mod:`.gates`): the structure level fails when a text fails any of its
  own gates; the pair's message, each role's table (``metrics["gates_failed"]``, which per-agent rewards
  read) and the credit for the gates passed all come from the same evaluation;
- **consistency from claims** (:mod:`.claims`): each claim of either text is supported, unsupported or
  contradicted by the source (or an outside judge's verdict, :mod:`.claims_judge`); a disagreement costs a
  stated share (:class:`~llm_coop_envs.writing.thresholds.ClaimsCheck`) and never stops the chain.

Levels: structure (gates, then the length ratio) → fluency → grounding → consistency → complementarity →
style → coherence; fluency × grounding × consistency multiply the three after them, as in ``-v4``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from llm_coop_envs.writing import claims_judge, facts, gates
from llm_coop_envs.writing.lm import LanguageModel, Request
from llm_coop_envs.writing.lm_levels import (
    chained_levels, complementarity_level, credit_requests, fluency_level, gate_credit, grounding_level, model_scores,
    requests,
)
from llm_coop_envs.writing.outcome import LevelOutcome
from llm_coop_envs.writing.reward import PairScore, PairTexts, coherence_level, length_ratio_level, style_level
from llm_coop_envs.writing.rouge import rouge_mean
from llm_coop_envs.writing.text_jobs import coverage
from llm_coop_envs.writing.thresholds import LevelConfig


@dataclasses.dataclass(frozen=True)
class Gated:
    """A pair after its gates: the normalised pair, both texts as the gates read them, and each gate's problem."""

    pair: PairTexts
    texts: tuple[gates.Text, gates.Text]
    problems: dict[str, dict[str, str | None]]
    """role -> gate -> what is wrong (None: passed)."""

    @property
    def table(self) -> dict[str, dict[str, bool]]:
        return {role: gates.passed(found) for role, found in self.problems.items()}

    def failed(self) -> LevelOutcome | None:
        found = [f"the {role} text {problem}" for role, by_gate in self.problems.items()
                 for problem in by_gate.values() if problem is not None]
        if not found:
            return None
        return LevelOutcome("structure", 0.0, False, "Structure failed: " + "; ".join(found) + ".")


def gated(pair: PairTexts, config: LevelConfig) -> Gated:
    """Normalise the pair once and run every gate of both texts on it."""
    texts = gates.texts(pair.roles, pair.texts, pair.source, pair.source_name, pair.profile, config)
    plain = dataclasses.replace(pair, texts=(texts[0].plain, texts[1].plain), source=texts[0].source)
    return Gated(plain, texts, {text.role: gates.gate_problems(text) for text in texts})


def _order_suspect(second: gates.Text) -> bool:
    """The second text's sentence pairs run more against the source's order than along it (the model then
    compares the text with its reverse)."""
    tau, _ = gates.second_text_concordance(second)
    return tau is not None and tau < 0


def requests_if_scored(pair: PairTexts, config: LevelConfig) -> list[Request]:
    """What the model reads for this pair: every row when it passes the structure level, only the gate
    credit's rows when a gate fails, nothing when the length ratio fails."""
    found = gated(pair, config)
    if found.failed() is not None:
        return credit_requests(found.pair, config, found.table)
    tokens = (found.texts[0].words, found.texts[1].words)
    if not length_ratio_level(found.pair, tokens, config, {}).passed:
        return []
    return requests(found.pair, _order_suspect(found.texts[1]))


def score_pair_v5(pair: PairTexts, config: LevelConfig, lm: LanguageModel, reference: str | None = None,
                  judge: claims_judge.ClaimsJudge | None = None) -> PairScore:
    """Run the ``-v5`` levels in order. Never raises for any strings (a missing model or parser raises
    :class:`~llm_coop_envs.writing.lm.LanguageModelUnavailable` or :class:`~llm_coop_envs.writing.claims.ParserUnavailable`)."""
    names = config.level_names()
    found = gated(pair, config)
    plain, tokens = found.pair, (found.texts[0].words, found.texts[1].words)
    metrics: dict[str, Any] = {"words": {role: len(t) for role, t in zip(plain.roles, tokens)},
                               "gates_failed": {role: [g for g, ok in table.items() if not ok] for role, table in found.table.items()}}
    dropped = [text.role for text in found.texts if text.tail_dropped]
    if dropped:
        metrics["unfinished_tail_dropped"] = dropped
    failure = found.failed()
    if failure is not None:
        credit = (gate_credit(failure, plain, found.table, config, lm, metrics),)
        return PairScore(_cut_short(credit, dropped, config.lm.unfinished_tail_factor), None, metrics, names, gated=True)
    rouge = None
    if reference is not None and reference.strip():
        rouge = rouge_mean(plain.texts[0], reference)
        metrics["rouge"] = round(rouge, 4)
    metrics["coverage"] = round(coverage(plain.texts, plain.source), 4)
    check = config.lm
    later = {
        "fluency": lambda: fluency_level(plain, scores, check, metrics),
        "grounding": lambda: grounding_level(plain, scores, check, metrics),
        "consistency": lambda: consistency_level(plain, config, metrics, judge),
        "complementarity": lambda: complementarity_level(plain, scores, check, metrics),
        "style": lambda: style_level(plain, tokens, config, metrics),
        "coherence": lambda: coherence_level(tokens, config, metrics),
    }
    first = length_ratio_level(plain, tokens, config, metrics)
    scores = model_scores(plain, lm, _order_suspect(found.texts[1])) if first.passed else []
    return PairScore(_cut_short(chained_levels(first, later, names), dropped, check.unfinished_tail_factor),
                     rouge, metrics, names)


def _cut_short(levels: tuple[LevelOutcome, ...], dropped: list[str], factor: float) -> tuple[LevelOutcome, ...]:
    """Every level times ``factor`` when a text's unfinished tail was dropped (``drop_unfinished_tail``)."""
    if not dropped or factor == 1.0:
        return levels
    why = f" (× {factor:g}: the {' and '.join(dropped)} text stopped mid-sentence; only its finished sentences were read)"
    return tuple(dataclasses.replace(level, score=level.score * factor, message=level.message + why) for level in levels)


def consistency_level(pair: PairTexts, config: LevelConfig, metrics: dict,
                      judge: claims_judge.ClaimsJudge | None = None) -> LevelOutcome:
    """Each claim of either text against the source; passes unless the found disagreements take the whole
    level (one false alarm costs a stated share and never stops the chain; three contradictions do)."""
    contradicted, unsupported, judged_by = [], [], []
    for role, text, check_names in zip(pair.roles, pair.texts, config.lm.check_names):
        found = claims_judge.judged(text, pair.source, judge)
        judged_by.append("judge" if found.judged else "offline")
        if found.error:
            metrics.setdefault("claims_judge_error", found.error)
        contradicted += [f"{role}: {v.describe()}" for v in found.verdicts if v.kind == "contradicted"]
        contradicted += [f"{role}: {problem}" for problem in _stated_values(text, pair.source, check_names)]
        unsupported += [f"{role}: {v.claim.sentence.strip()[:120]!r}" for v in found.verdicts if v.kind == "unsupported"]
    metrics["claims"] = {"contradicted": contradicted[:8], "unsupported": unsupported[:8],
                         "counts": {"contradicted": len(contradicted), "unsupported": len(unsupported)},
                         "read_by": judged_by}
    score = config.claims.consistency(len(contradicted), len(unsupported))
    what = (f"{len(contradicted)} claim(s) the {pair.source_name} contradicts, {len(unsupported)} it does not support "
            f"(the k-th contradiction costs k × {config.claims.contradiction_cost:.2f}, each unsupported claim "
            f"{config.claims.unsupported_cost:.2f}, those at most {config.claims.max_unsupported_cost:.2f} together)")
    said = "".join(f"; {item}" for item in contradicted[:3]) + "".join(f"; unsupported {item}" for item in unsupported[:2])
    if score > 0:
        return LevelOutcome("consistency", score, True, f"Consistency passed: {what}{said}.")
    return LevelOutcome("consistency", 0.0, False,
                        f"Consistency failed: {what}{said}: state only what the {pair.source_name} says.")


def _stated_values(text: str, source: str, check_names: bool) -> list[str]:
    """``-v4``'s exact checks that kept their precision: each number written in digits and each name the source
    never states, and names put in each other's place (names only for a role that must name only what the
    source names). None of them flagged any of the 60 hand-written honest pairs; ``-v4``'s flipped-statement
    check, which flagged 6 of 40, is left to the claims."""
    found = [f"{number!r}: a number the source does not state" for number in facts.unknown_numbers(text, source)]
    if check_names:
        names = facts.unknown_names(text, source) + facts.swapped_names(text, source)
        found += [f"{name!r}: a name the source does not mention, or two names swapped" for name in names]
    return found
