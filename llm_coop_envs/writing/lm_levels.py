"""The ``-v3`` writing reward: a language model reads the texts; exact checks guard facts.

Gated levels, in order (a failed level stops the scoring; the levels after fluency are multiplied by
fluency × grounding × consistency, so well-divided text earns only as much as it reads, is about its
source and agrees with it):

1. **structure**: every check that needs no model, so a gated pair never reaches it: the ``-v2`` gates
   run on the texts' skeleton (look-alike letters of other alphabets mapped to the Latin ones they
   imitate), plus: no word mixes alphabets, no text is built from one repeated sentence frame, no text
   strings the source's own content words together in the source's order (:attr:`LMCheck.max_content_in_order`),
   no text stops on an article, a preposition or a conjunction, the texts that must
   (:attr:`LMCheck.finished`) end in a finished sentence, and the ``-v2`` sentence-order check with
   clauses after ``;`` and ``:`` counted as sentences; then the length ratio.
2. **fluency**: the mean log-probability per token of each text on its own under the model, in a
   band (word salad, glued fragments and broken text are unlikely; the worse text is scored). When the
   second text's sentences run against the source's order (word-level concordance below 0), the model
   also reads it with its sentences reversed: reading better that way fails the level.
3. **grounding**: how much the source explains each text, the pointwise mutual information per
   token PMI = (log p(text | source) − log p(text)) / tokens: the better-grounded text's PMI in a
   band (a pair about another source or no source gains nothing), not both texts above
   :attr:`LMCheck.copy_pmi` nor the second above :attr:`LMCheck.max_second_pmi` (they repeat the
   source), no more than :attr:`LMCheck.max_off_source` of a text's tokens in sentences that gain
   nothing from the source (an appended paragraph, a half from elsewhere, a loop), and for arXiv the
   roles by halves (:attr:`LMCheck.role_halves`: each half of the methods text explained about as much
   as the background's better-explained half or more).
4. **consistency**: numbers and names the source does not state, names put in each other's place,
   statements with flipped polarity against the source (a negation added or dropped, a word replaced by
   its opposite, where a source sentence shares the statement's other words; stacked negations) each
   cost :attr:`LMCheck.fact_penalty`; at 0 the level fails.
5. **complementarity**: redundancy = (log p(second | source, first) − log p(second | source)) / tokens,
   what the first text already says of the second, in a band (a restatement is explained by its
   partner); for arXiv also the role gap PMI(method) − PMI(background).
6. **style** and 7. **coherence**: as in ``-v2`` (the order check ran with the structure gates).

The model is asked for every text of a step at once (:func:`requests`: four rows per pair, the first
text and then the second after the source in one row), so an env scoring a group of pairs runs one
batched forward pass over the source read once (:meth:`LanguageModel.score` caches the answers).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llm_coop_envs.writing import facts
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lm import LanguageModel, Request, TokenScores, prompts
from llm_coop_envs.writing.outcome import LevelOutcome
from llm_coop_envs.writing.reward import (
    PairScore, PairTexts, coherence_level, length_ratio_level, _order, _structure_gates, style_level,
)
from llm_coop_envs.writing.rouge import rouge_mean
from llm_coop_envs.writing.text_gates import describe, failed_gate_credit, passing_roles, text_gates
from llm_coop_envs.writing.thresholds import LevelConfig, LMCheck

_SENTENCE = re.compile(r"[^.!?;:\n]+(?:[.!?;:]+|\n|$)")


def requests(pair: PairTexts, order_suspect: bool = False) -> list[Request]:
    """What the model must score for this pair: each text alone, the second after the source, and the
    first then the second after the source (one row gives the first text after the source and the second
    after both). The source is the shared context: the model reads it once for all of them. When the
    second text's sentences run against the source's order (``order_suspect``), also the second text with
    its sentences reversed, alone (does it read better the other way round?)."""
    parts = prompts(pair.source_name, pair.source)
    context, closing = parts["context"], parts["closing"]
    first, second = (t.strip() for t in pair.texts)
    asked = [("", closing, first), ("", closing, second), (context, closing, second),
             (context, closing, first + _between(closing) + second)]
    if order_suspect:
        asked.append(("", closing, reversed_clauses(second)))
    return asked


def _between(closing: str) -> str:
    return "\n\n" + closing


def pair_scores(pair: PairTexts, raw: Sequence[TokenScores]) -> list[TokenScores]:
    """The model's answers to :func:`requests` as five scores of the (stripped) texts: first alone, first
    after the source, second alone, second after the source, second after the source and the first."""
    closing = prompts(pair.source_name, pair.source)["closing"]
    first = pair.texts[0].strip()
    both = raw[3]
    start = len(first) + len(_between(closing))
    return [raw[0], both.part(0, len(first)), raw[1], raw[2], both.part(start, 1 << 62), *raw[4:]]


def model_scores(pair: PairTexts, lm: LanguageModel, order_suspect: bool = False) -> list[TokenScores]:
    """:func:`pair_scores` of this pair, asked of ``lm`` (cached answers cost nothing); a sixth score, the
    second text reversed, when ``order_suspect``."""
    return pair_scores(pair, lm.score(requests(pair, order_suspect)))


def _order_suspect(metrics: dict) -> bool:
    """The word-level order check placed more of the second text's sentence pairs against the source's
    order than along it (the model then compares the text with its reverse)."""
    concordance = metrics.get("order", {}).get("concordance")
    return concordance is not None and concordance < 0


def requests_if_scored(pair: PairTexts, config: LevelConfig) -> list[Request]:
    """:func:`requests` for a pair that passes the structure level; for a gated pair only what its gate
    credit needs (``-v4``: each text that passes its own gates, alone and after the source), else nothing."""
    skeletal, tokens = _skeletal(pair)
    metrics: dict = {}
    if _pair_gate(pair, skeletal, tokens, config, metrics) is not None:
        return credit_requests(pair, config, text_gates(pair, config)) if config.lm.failed_gate_credit > 0 else []
    if not length_ratio_level(pair, tokens, config, metrics).passed:
        return []
    return requests(pair, _order_suspect(metrics))


def credit_requests(pair: PairTexts, config: LevelConfig, gates: dict[str, dict[str, bool]]) -> list[Request]:
    """Each text that passes its own gates, alone and after the source (two rows per text; the first
    is the same row :func:`requests` asks for the text alone, so a cache serves both)."""
    if config.lm.credit_pmi is None:
        return []
    parts = prompts(pair.source_name, pair.source)
    passing = passing_roles(gates)
    texts = [text.strip() for role, text in zip(pair.roles, pair.texts) if role in passing]
    return [row for text in texts for row in (("", parts["closing"], text), (parts["context"], parts["closing"], text))]


def _skeletal(pair: PairTexts) -> tuple[PairTexts, tuple[list[str], list[str]]]:
    """The pair with look-alike letters mapped to one skeleton, and the words of its two texts."""
    skeletal = dataclasses.replace(pair, texts=tuple(facts.skeleton(t) for t in pair.texts))
    return skeletal, (tm.words(skeletal.texts[0]), tm.words(skeletal.texts[1]))


def _pair_gate(pair: PairTexts, skeletal: PairTexts, tokens, config: LevelConfig, metrics: dict) -> LevelOutcome | None:
    """The first failed kind of structure gate (word-level, then form, then order), or None: every gate passed."""
    return (_structure_gates(skeletal, tokens, config, metrics) or _form_gates(pair, config.lm, metrics)
            or _order_gate(_clauses_as_sentences(skeletal), config, metrics))


def _clauses_as_sentences(pair: PairTexts) -> PairTexts:
    """The pair with clauses after ``;`` and ``:`` made sentences (for the order check: a text joined
    with semicolons is not one sentence)."""
    return dataclasses.replace(pair, texts=tuple(re.sub(r"[;:]\s+", ". ", t) for t in pair.texts))


def _order_gate(pair: PairTexts, config: LevelConfig, metrics: dict) -> LevelOutcome | None:
    """Sentences out of order fail the structure level, before the model reads anything."""
    outcome = _order(pair, config, metrics)
    if outcome is None:
        return None
    return dataclasses.replace(outcome, name="structure", message=outcome.message.replace("Coherence failed", "Structure failed", 1))


def score_pair_v3(pair: PairTexts, config: LevelConfig, lm: LanguageModel, reference: str | None = None) -> PairScore:
    """Run the ``-v3`` levels in order, stopping at the first failure. Never raises for any strings
    (a missing model raises :class:`~llm_coop_envs.writing.lm.LanguageModelUnavailable`)."""
    check = config.lm
    names = config.level_names()
    skeletal, tokens = _skeletal(pair)
    metrics: dict[str, Any] = {"words": {role: len(t) for role, t in zip(pair.roles, tokens)}}
    gate = _pair_gate(pair, skeletal, tokens, config, metrics)
    if gate is not None:
        credit = gate_credit(gate, pair, text_gates(pair, config), config, lm, metrics)
        return PairScore((credit,), None, metrics, names, gated=True)
    rouge = None
    if reference is not None and reference.strip():
        rouge = rouge_mean(pair.texts[0], reference)
        metrics["rouge"] = round(rouge, 4)
    later = {
        "fluency": lambda: fluency_level(pair, scores, check, metrics),
        "grounding": lambda: grounding_level(pair, scores, check, metrics),
        "consistency": lambda: consistency_level(pair, check, metrics),
        "complementarity": lambda: complementarity_level(pair, scores, check, metrics),
        "style": lambda: style_level(skeletal, tokens, config, metrics),
        "coherence": lambda: coherence_level(tokens, config, metrics),
    }
    first = length_ratio_level(pair, tokens, config, metrics)
    # The model reads a pair only when its structure passed (a length ratio out of band stops here too).
    scores = model_scores(pair, lm, _order_suspect(metrics)) if first.passed else []
    return PairScore(chained_levels(first, later, names), rouge, metrics, names)


def chained_levels(first: LevelOutcome, later: Mapping[str, Callable[[], LevelOutcome]],
                   names: Sequence[str]) -> tuple[LevelOutcome, ...]:
    """The levels after ``first`` in the order of ``names``, each made by its ``later`` function only
    once the level before it passed; every level after fluency, grounding and consistency is scaled by
    their product (the chain of ``-v3`` and later)."""
    levels = [first]
    factor = 1.0
    for name in names[1:]:
        if not levels[-1].passed:
            break
        outcome = later[name]()
        if factor < 1.0 and name not in _SCALING:
            # Later levels earn only as much as the texts read as language, are about their source and agree with it.
            outcome = dataclasses.replace(outcome, score=outcome.score * factor,
                                          message=f"{outcome.message} (× fluency × grounding × consistency {factor:.2f})")
        if name in _SCALING:
            factor *= outcome.score
        levels.append(outcome)
    return tuple(levels)


def gate_credit(gate: LevelOutcome, pair: PairTexts, gates: dict[str, dict[str, bool]], config: LevelConfig,
                lm: LanguageModel, metrics: dict) -> LevelOutcome:
    """The failed structure level, with the credit for each text's gates passed (``gates``: role -> gate ->
    passed) and, for a text that passes them all, for being about its source (``-v4`` on; :mod:`.text_gates`)."""
    check = config.lm
    if check.failed_gate_credit <= 0.0:
        return gate
    metrics["gates_failed"] = {role: [name for name, ok in passed.items() if not ok] for role, passed in gates.items()}
    passing = passing_roles(gates)
    grounded = dict.fromkeys(passing, 1.0)
    asked = credit_requests(pair, config, gates)
    if asked:
        raw = lm.score(asked)
        pmi = {role: (raw[2 * k + 1].total - raw[2 * k].total) / max(len(raw[2 * k]), 1) for k, role in enumerate(passing)}
        metrics["credit_pmi"] = {role: round(v, 4) for role, v in pmi.items()}
        grounded = {role: check.credit_pmi.score(v) for role, v in pmi.items()}
    score = failed_gate_credit(gates, check.failed_gate_credit, grounded)
    about = "".join(f"; the {pair.source_name} explains the {role} text {metrics['credit_pmi'][role]:+.2f} nats per token"
                    for role in metrics.get("credit_pmi", {}))
    failed = describe(gates)
    return dataclasses.replace(gate, score=score, message=f"{gate.message} Credit {score:.2f} for the gates passed "
                                                          f"(failed: {failed}{about}).")


_SCALING = ("fluency", "grounding", "consistency")
"""The levels whose scores multiply every later level."""


def _form_gates(pair: PairTexts, check: LMCheck, metrics: dict) -> LevelOutcome | None:
    """The structure gates ``-v3`` adds: mixed alphabets, templated sentences, unfinished text (and ``-v4`` looping text)."""
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
        if (must_finish and facts.unfinished(text)) or facts.trails_off(text):
            problems.append(f"the {role} text stops mid-sentence")
        body = facts.skeleton(text)
        repeated = check.repeated_share(tm.words(body))
        if repeated is not None:
            metrics.setdefault("repeated_share", {})[role] = round(repeated, 4)
            if repeated > check.max_repeated:
                problems.append(f"the {role} text repeats itself ({repeated:.0%} of its words are in {check.repeat_words}-word "
                                f"phrases it says more than once; at most {check.max_repeated:.0%})")
        in_order, content_words = facts.content_in_order(body, pair.source)
        metrics.setdefault("content_in_order", {})[role] = round(in_order, 4)
        if content_words >= check.min_content_words and in_order > check.max_content_in_order:
            problems.append(f"the {role} text strings the {pair.source_name}'s own words together in its order "
                            f"({in_order:.0%} of its content words; at most {check.max_content_in_order:.0%}): write in your own words")
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
    if len(scores) > 5 and len(scores[2]):
        # The second text runs against the source's order: does it read better the other way round?
        gain = (scores[5].total - scores[2].total) / len(scores[2])
        metrics["reversed_gain"] = round(gain, 4)
        if gain > check.max_reversed_gain:
            second = pair.roles[1]
            return LevelOutcome("fluency", 0.0, False,
                                f"Fluency failed: the {second} text reads better with its sentences in reverse order "
                                f"({gain:+.2f} nats per token; at most {check.max_reversed_gain:+.2f} where its points run "
                                f"against the {pair.source_name}'s order): keep the sentences in a logical order.")
    if score > 0:
        hint = "" if score == 1.0 else f": the {worst} text reads poorly; write plain, grammatical sentences"
        return LevelOutcome("fluency", score, True, f"Fluency passed: {what}{hint}.")
    return LevelOutcome("fluency", 0.0, False, f"Fluency failed: {what}: the {worst} text does not read as language.")


def reversed_clauses(text: str) -> str:
    """The text with its sentences (and clauses after ``;`` or ``:``) in reverse order, each ending with the
    punctuation that stood at its new place ("A; B; C." becomes "C; B; A."): what the order check compares with."""
    parts = [text[a:b] for a, b in sentence_spans(text)]
    bodies = [p.strip().rstrip(".!?;:").strip() for p in parts]
    ends = [p.strip()[len(p.strip().rstrip(".!?;:")):] or "" for p in parts]
    return " ".join(body + end for body, end in zip(bodies[::-1], ends)).strip()


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


def half_pmis(plain: TokenScores, given: TokenScores) -> tuple[float, float]:
    """The source's gain per token over the first and the second half of a text's tokens."""
    gains = [g - p for p, g in zip(plain.logprobs, given.logprobs)]
    half = len(gains) // 2
    if not half:
        value = math.fsum(gains) / max(len(gains), 1)
        return value, value
    return math.fsum(gains[:half]) / half, math.fsum(gains[half:]) / (len(gains) - half)


def grounding_level(pair: PairTexts, scores: Sequence[TokenScores], check: LMCheck, metrics: dict) -> LevelOutcome:
    pmi, off = {}, {}
    for k, (role, text) in enumerate(zip(pair.roles, pair.texts)):
        plain, given = scores[2 * k], scores[2 * k + 1]
        pmi[role] = (given.total - plain.total) / max(len(plain), 1)
        off[role] = off_source_share(plain, given, text.strip(), check.sentence_pmi)
    metrics["pmi"] = {role: round(v, 4) for role, v in pmi.items()}
    metrics["off_source_share"] = {role: round(v, 4) for role, v in off.items()}
    band, name = check.pmi, pair.source_name
    what = (f"the {name} explains {', '.join(f'{r} {v:+.2f}' for r, v in pmi.items())} nats per token "
            f"({band.describe()}); sentences that gain nothing from it: "
            f"{', '.join(f'{r} {v:.0%}' for r, v in off.items())} (at most {check.max_off_source:.0%})")
    best = max(pmi, key=pmi.get)
    score = band.score(pmi[best])
    strayed = [role for role, share in off.items() if share > check.max_off_source]
    crossed = None
    if check.role_halves is not None:
        halves = [half_pmis(scores[2 * k], scores[2 * k + 1]) for k in range(2)]
        crossed = min(halves[1]) - max(halves[0])
        metrics["role_halves"] = round(crossed, 4)
        what += (f"; the {pair.roles[1]} text's less explained half gains {crossed:+.2f} more than the "
                 f"{pair.roles[0]} text's better explained half (above {check.role_halves:+.2f})")
    if strayed:
        why = f"the {' and '.join(strayed)} text says things the {name} does not explain"
    elif crossed is not None and crossed < check.role_halves:
        why = (f"the {pair.roles[0]} text reports the {name} where the {pair.roles[1]} text brings context: the roles "
               f"are crossed (the {pair.roles[0]} text brings context, the {pair.roles[1]} text reports the {name} throughout)")
    elif check.max_second_pmi is not None and pmi[pair.roles[1]] > check.max_second_pmi:
        why = (f"the {pair.roles[1]} text repeats the {name} instead of retelling it (above {check.max_second_pmi:.2f} "
               f"per token)")
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
