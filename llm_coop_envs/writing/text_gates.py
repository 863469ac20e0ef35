"""Each text's own structure gates, every one evaluated (the pair's gate message stops at the first kind).

The structure level of ``-v3`` fails a pair as soon as one gate fails, and pays nothing for it: a
policy whose every sample fails some gate gets no signal at all (MAGRPO on ``tldr-v3``: all 64
training pairs and all 100 held-out pairs scored 0; docs/envs/writing.md, "Seen under RL"). From
``-v4`` on a failed structure level pays a small credit for the gates each text passes, and for a text
that passes them all, for being about its source (:func:`failed_gate_credit`): a sample that fails
fewer gates earns more, a fluent text about nothing in particular earns only the first half (the
first run of ``-v4`` without that half taught the TL;DR to write generic comments on "the post"), and a
pair that passes every gate still earns more than any pair that fails one.

The gates here are the same checks as the pair's (:mod:`.reward`, :mod:`.lm_levels`), run on the
text's skeleton (look-alike letters mapped) where the pair's are:

- ``length``: words within the role's bounds; ``distinct``: not looping on a few words; ``prose``:
  enough function words; ``copy`` and ``copy_in_order``: not copied from the source, whole or with
  words left out;
- ``alphabet``: no word mixes alphabets; ``template``: not one repeated sentence frame; ``finished``:
  ends where a sentence can end; ``repeats``: does not say a long phrase again and again (``-v4``);
  ``own_words``: does not string the source's content words together in its order; ``opening``: does
  not open with a connective that needs a sentence before it;
- ``source_order`` (second text only): does not tell the source's points in scrambled order.
"""

from __future__ import annotations

import re

from llm_coop_envs.writing import facts
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.grounding import function_word_share, in_order_share
from llm_coop_envs.writing.order import SourceSentences, concordance, dangling_opener
from llm_coop_envs.writing.reward import PairTexts
from llm_coop_envs.writing.thresholds import LevelConfig

GATES = ("length", "distinct", "prose", "copy", "copy_in_order", "alphabet", "template", "finished", "repeats",
         "own_words", "opening", "source_order")
"""Every text's gates, in the order the pair's message names them."""


def text_gates(pair: PairTexts, config: LevelConfig) -> dict[str, dict[str, bool]]:
    """For each role, whether its text passes each of :data:`GATES` (True: passes). Never raises for any strings."""
    return {role: _own_gates(pair, k, config) for k, role in enumerate(pair.roles)}


def _own_gates(pair: PairTexts, k: int, config: LevelConfig) -> dict[str, bool]:
    text = pair.texts[k]
    body = facts.skeleton(text)
    words = tm.words(body)
    source_words = tm.words(pair.source)
    low, high = (config.first_words, config.second_words)[k]
    check = config.lm
    n = config.copy_ngram
    in_order, content_words = facts.content_in_order(body, pair.source)
    clauses = re.sub(r"[;:]\s+", ". ", body)
    return {
        "length": low <= len(words) <= high,
        "distinct": tm.distinct_ratio(words) >= config.min_distinct_ratio,
        "prose": config.min_function_word_share <= 0.0 or function_word_share(words) >= config.min_function_word_share,
        "copy": tm.copied_fraction(words, tm.ngrams(source_words, n), n) <= config.max_copied_fraction,
        "copy_in_order": config.max_in_order_share >= 1.0 or in_order_share(words, source_words) <= config.max_in_order_share,
        "alphabet": not facts.mixed_script_words(text),
        "template": facts.templated_share(text) <= check.max_templated,
        "finished": not ((check.finished[k] and facts.unfinished(text)) or facts.trails_off(text)),
        "repeats": (check.repeated_share(words) or 0.0) <= check.max_repeated,
        "own_words": content_words < check.min_content_words or in_order <= check.max_content_in_order,
        "opening": config.order is None or dangling_opener(clauses) is None,
        "source_order": k == 0 or config.order is None or _in_source_order(clauses, pair, config),
    }


def _in_source_order(text: str, pair: PairTexts, config: LevelConfig) -> bool:
    if pair.profile is None:
        return True
    tau, pairs = concordance(text, SourceSentences.build(pair.source), pair.profile, config.order.min_share)
    return tau is None or pairs < config.order.min_pairs or tau > config.order.max_reversed


def failed_gate_credit(gates: dict[str, dict[str, bool]], credit: float, grounded: dict[str, float]) -> float:
    """The structure score of a pair that failed a gate: ``credit / 2`` per text at most, of which a text earns
    half for the share of its gates it passes and the other half when it passes all of them, times how far
    its source explains it (``grounded[role]`` in [0, 1]; a role missing from it counts 0). Below ``credit``
    whenever a gate fails (the pair earns at least 0.5 once every gate passes); a text on its source that
    passes every gate earns clearly more than one that fails any, and more than a fluent text about nothing."""
    per_text = [0.5 * sum(passed.values()) / len(passed) + 0.5 * all(passed.values()) * grounded.get(role, 0.0)
                for role, passed in gates.items()]
    return credit / 2 * sum(per_text)


def passing_roles(gates: dict[str, dict[str, bool]]) -> list[str]:
    """The roles whose text passes every one of its gates."""
    return [role for role, passed in gates.items() if all(passed.values())]


def describe(gates: dict[str, dict[str, bool]]) -> str:
    """The failed gates by role, for feedback: "detail: distinct, copy"."""
    failed = {role: [name for name, ok in passed.items() if not ok] for role, passed in gates.items()}
    return "; ".join(f"{role}: {', '.join(names)}" for role, names in failed.items() if names)

