"""The ``-v3`` writing reward: a language model reads the texts; exact checks guard facts.

Gated levels, in order (a failed level stops the scoring; the levels after grounding are multiplied
by fluency × grounding, so well-divided text earns only as much as it reads and is about its source):

1. **structure**: the ``-v2`` gates run on the texts' skeleton (look-alike letters of other alphabets
   mapped to the Latin ones they imitate), plus: no word mixes alphabets, no text is built from one
   repeated sentence frame, the texts that must (:attr:`LMCheck.finished`) end in a finished sentence;
   then the length ratio.
2. **fluency**: the mean log-probability per token of each text on its own under the model, in a
   band (word salad, glued fragments and broken text are unlikely; the worse text is scored).
3. **grounding**: how much the source explains each text, the pointwise mutual information per
   token PMI = (log p(text | source) − log p(text)) / tokens: the better-grounded text's PMI in a
   band (a pair about another source or no source gains nothing), not both texts above
   :attr:`LMCheck.copy_pmi` (together they repeat the source), and no more than
   :attr:`LMCheck.max_off_source` of a text's tokens in sentences that gain nothing from the source
   (an appended paragraph, a half from elsewhere, a loop).
4. **consistency**: numbers and names the source does not state, sentences restating a source
   sentence with flipped polarity (a negation added or dropped, a word replaced by its opposite)
   each cost :attr:`LMCheck.fact_penalty`; at 0 the level fails.
5. **complementarity**: redundancy = (log p(second | source, first) − log p(second | source)) / tokens,
   what the first text already says of the second, in a band (a restatement is explained by its
   partner); for arXiv also the role gap PMI(method) − PMI(background) (the methods part reports the
   abstract, the background brings context).
6. **style** and 7. **coherence**: as in ``-v2``; the order check splits sentences at ``;`` too.

The model is asked for every text of a step at once (:func:`requests`), so an env scoring a group
of pairs runs one batched forward pass (:meth:`LanguageModel.score` caches the answers).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from typing import Any

from llm_coop_envs.writing import facts
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lm import LanguageModel, Request, TokenScores, prompts
from llm_coop_envs.writing.outcome import LevelOutcome
from llm_coop_envs.writing.reward import (
    PairScore, PairTexts, _coherence, _length_ratio, _order, _structure_gates, _style,
)
from llm_coop_envs.writing.rouge import rouge_mean
from llm_coop_envs.writing.thresholds import LevelConfig, LMCheck

_SENTENCE = re.compile(r"[^.!?;:\n]+(?:[.!?;:]+|\n|$)")


def requests(pair: PairTexts) -> list[Request]:
    """What the model must score for this pair: each text alone and after the source, the second after both.
    The source is the shared context: the model reads it once for all of them."""
    parts = prompts(pair.source_name, pair.source)
    context, closing = parts["context"], parts["closing"]
    first, second = pair.texts
    return [("", closing, first), (context, closing, first), ("", closing, second), (context, closing, second),
            (context, closing + first.strip() + "\n\n" + closing, second)]


def requests_if_scored(pair: PairTexts, config: LevelConfig) -> list[Request]:
    """:func:`requests` for a pair that passes the structure gates (a gated pair never reaches the model)."""
    skeletal = dataclasses.replace(pair, texts=tuple(facts.skeleton(t) for t in pair.texts))
    tokens = (tm.words(skeletal.texts[0]), tm.words(skeletal.texts[1]))
    if _structure_gates(skeletal, tokens, config, {}) or _form_gates(pair, config.lm, {}):
        return []
    return requests(pair)


def score_pair_v3(pair: PairTexts, config: LevelConfig, lm: LanguageModel, reference: str | None = None) -> PairScore:
    """Run the ``-v3`` levels in order, stopping at the first failure. Never raises for any strings
    (a missing model raises :class:`~llm_coop_envs.writing.lm.LanguageModelUnavailable`)."""
    check = config.lm
    names = config.level_names()
    skeletal = dataclasses.replace(pair, texts=tuple(facts.skeleton(t) for t in pair.texts))
    tokens = (tm.words(skeletal.texts[0]), tm.words(skeletal.texts[1]))
    metrics: dict[str, Any] = {"words": {role: len(t) for role, t in zip(pair.roles, tokens)}}
    gate = _structure_gates(skeletal, tokens, config, metrics) or _form_gates(pair, check, metrics)
    if gate is not None:
        return PairScore((gate,), None, metrics, names)
    rouge = None
    if reference is not None and reference.strip():
        rouge = rouge_mean(pair.texts[0], reference)
        metrics["rouge"] = round(rouge, 4)
    scores = lm.score(requests(pair))
    ordered = dataclasses.replace(skeletal, texts=tuple(re.sub(r";\s+", ". ", t) for t in skeletal.texts))
    later = {
        "fluency": lambda: fluency_level(pair, scores, check, metrics),
        "grounding": lambda: grounding_level(pair, scores, check, metrics),
        "consistency": lambda: consistency_level(pair, check, metrics),
        "complementarity": lambda: complementarity_level(pair, scores, check, metrics),
        "style": lambda: _style(skeletal, tokens, config, metrics),
        "coherence": lambda: _order(ordered, config, metrics) or _coherence(tokens, config, metrics),
    }
    levels = [_length_ratio(pair, tokens, config, metrics)]
    factor = 1.0
    for name in names[1:]:
        if not levels[-1].passed:
            break
        outcome = later[name]()
        if factor < 1.0 and name not in ("fluency", "grounding"):
            # Later levels earn only as much as the texts read as language and are about their source.
            outcome = dataclasses.replace(outcome, score=outcome.score * factor,
                                          message=f"{outcome.message} (× fluency × grounding {factor:.2f})")
        if name in ("fluency", "grounding"):
            factor *= outcome.score
        levels.append(outcome)
    return PairScore(tuple(levels), rouge, metrics, names)


def _form_gates(pair: PairTexts, check: LMCheck, metrics: dict) -> LevelOutcome | None:
    """The structure gates ``-v3`` adds: mixed alphabets, templated sentences, unfinished text."""
    problems = []
    for role, text, must_finish in zip(pair.roles, pair.texts, check.finished):
        mixed = facts.mixed_script_words(text)
        templated = facts.templated_share(text)
        metrics.setdefault("templated_share", {})[role] = round(templated, 4)
        if mixed:
            problems.append(f"the {role} text mixes alphabets inside words ({', '.join(mixed[:3])})")
        if templated > check.max_templated:
            problems.append(f"the {role} text repeats one sentence frame ({templated:.0%} of its sentences; at most "
                            f"{check.max_templated:.0%})")
        if must_finish and facts.unfinished(text):
            problems.append(f"the {role} text stops mid-sentence")
    if not problems:
        return None
    return LevelOutcome("structure", 0.0, False, "Structure failed: " + "; ".join(problems) + ".")


def _per_token(scores: TokenScores) -> float:
    return scores.total / len(scores) if len(scores) else -math.inf


def fluency_level(pair: PairTexts, scores: Sequence[TokenScores], check: LMCheck, metrics: dict) -> LevelOutcome:
    values = {role: _per_token(scores[2 * k]) for k, role in enumerate(pair.roles)}
    metrics["fluency_logprob"] = {role: round(v, 4) for role, v in values.items()}
    worst = min(values, key=values.get)
    score = check.fluency.score(values[worst])
    what = (f"mean log-probability per token {', '.join(f'{r} {v:.2f}' for r, v in values.items())} "
            f"({check.fluency.describe()})")
    if score > 0:
        hint = "" if score == 1.0 else f": the {worst} text reads poorly; write plain, grammatical sentences"
        return LevelOutcome("fluency", score, True, f"Fluency passed: {what}{hint}.")
    return LevelOutcome("fluency", 0.0, False, f"Fluency failed: {what}: the {worst} text does not read as language.")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences (and lines, and clauses after ``;`` or ``:``) of a text."""
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text) if m.group().strip()]


def off_source_share(plain: TokenScores, given: TokenScores, text: str, threshold: float) -> float:
    """Share of the text's tokens in sentences that gain less than ``threshold`` per token from the source."""
    off = total = 0
    for start, end in sentence_spans(text):
        alone, with_source = plain.span(start, end), given.span(start, end)
        if not alone:
            continue
        gain = (math.fsum(with_source) - math.fsum(alone)) / len(alone)
        total += len(alone)
        off += len(alone) * (gain < threshold)
    return off / total if total else 1.0


def grounding_level(pair: PairTexts, scores: Sequence[TokenScores], check: LMCheck, metrics: dict) -> LevelOutcome:
    pmi, off = {}, {}
    for k, (role, text) in enumerate(zip(pair.roles, pair.texts)):
        plain, given = scores[2 * k], scores[2 * k + 1]
        pmi[role] = (given.total - plain.total) / max(len(plain), 1)
        off[role] = off_source_share(plain, given, text, check.sentence_pmi)
    metrics["pmi"] = {role: round(v, 4) for role, v in pmi.items()}
    metrics["off_source_share"] = {role: round(v, 4) for role, v in off.items()}
    band, name = check.pmi, pair.source_name
    what = (f"the {name} explains {', '.join(f'{r} {v:+.2f}' for r, v in pmi.items())} nats per token "
            f"({band.describe()}); sentences that gain nothing from it: "
            f"{', '.join(f'{r} {v:.0%}' for r, v in off.items())} (at most {check.max_off_source:.0%})")
    best = max(pmi, key=pmi.get)
    score = band.score(pmi[best])
    strayed = [role for role, share in off.items() if share > check.max_off_source]
    if strayed:
        why = f"the {' and '.join(strayed)} text says things the {name} does not explain"
    elif min(pmi.values()) > check.copy_pmi:
        why = f"both texts repeat the {name} instead of writing about it (above {check.copy_pmi:.2f} per token)"
    elif score == 0:
        why = f"the texts are not about this {name}"
    else:
        hint = "" if score == 1.0 else f": say more of what the {name} itself says"
        return LevelOutcome("grounding", score, True, f"Grounding passed: {what}{hint}.")
    return LevelOutcome("grounding", 0.0, False, f"Grounding failed: {what}: {why}.")


def consistency_level(pair: PairTexts, check: LMCheck, metrics: dict) -> LevelOutcome:
    found = []
    for role, text, names in zip(pair.roles, pair.texts, check.check_names):
        problems = facts.fact_problems(text, pair.source)
        if not names:
            problems["names"] = []
        metrics.setdefault("facts", {})[role] = {kind: items[:5] for kind, items in problems.items()}
        found += [f"{role}: {_FACT_WORDS[kind]} {item!r}" for kind, items in problems.items() for item in items]
    score = max(0.0, 1.0 - check.fact_penalty * len(found))
    if not found:
        return LevelOutcome("consistency", 1.0, True,
                            f"Consistency passed: every number, name and negation agrees with the {pair.source_name}.")
    what = f"{len(found)} disagreement(s) with the {pair.source_name}: " + "; ".join(found[:4])
    if score > 0:
        return LevelOutcome("consistency", score, True, f"Consistency passed: {what}.")
    return LevelOutcome("consistency", 0.0, False, f"Consistency failed: {what}: state only what the {pair.source_name} says.")


_FACT_WORDS = {"numbers": "a number the source does not state", "names": "a name the source does not mention",
               "flipped": "a statement the source says the opposite of"}


def complementarity_level(pair: PairTexts, scores: Sequence[TokenScores], check: LMCheck, metrics: dict) -> LevelOutcome:
    second_given_source, second_given_both = scores[3], scores[4]
    redundancy = (second_given_both.total - second_given_source.total) / max(len(second_given_source), 1)
    metrics["redundancy"] = round(redundancy, 4)
    first, second = pair.roles
    score = check.redundancy.score(redundancy)
    what = f"the {first} text explains {redundancy:+.2f} nats per token of the {second} text ({check.redundancy.describe()})"
    if check.role_gap is not None:
        pmi = metrics["pmi"]
        gap = pmi[second] - pmi[first]
        metrics["role_gap"] = round(gap, 4)
        score *= check.role_gap.score(gap)
        what += f"; the {pair.source_name} explains the {second} text {gap:+.2f} more than the {first} text ({check.role_gap.describe()})"
    advice = (f"the {second} text should add what the {first} text leaves out, not restate it"
              + (f"; the {first} text brings context, the {second} text reports the {pair.source_name}" if check.role_gap else ""))
    if score > 0:
        hint = "" if score == 1.0 else f": {advice}"
        return LevelOutcome("complementarity", score, True, f"Complementarity passed: {what}{hint}.")
    return LevelOutcome("complementarity", 0.0, False, f"Complementarity failed: {what}: {advice}.")
