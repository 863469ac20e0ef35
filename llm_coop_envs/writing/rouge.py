"""ROUGE of a summary against a reference, with the ``rouge-score`` package (works offline)."""

from __future__ import annotations

import functools

from rouge_score import rouge_scorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@functools.lru_cache(maxsize=1)
def _scorer() -> rouge_scorer.RougeScorer:
    # Porter stemming as in the usual summarisation setup; rouge-score's own tokenizer keeps [a-z0-9].
    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge_f1(summary: str, reference: str) -> dict[str, float]:
    """F1 of ROUGE-1, ROUGE-2 and ROUGE-L (0.0 each when either text has no words)."""
    scores = _scorer().score(reference, summary)
    return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


def rouge_mean(summary: str, reference: str) -> float:
    """The mean of the three F1 scores: the ``rouge`` reward component before its weight."""
    scores = rouge_f1(summary, reference)
    return sum(scores.values()) / len(scores)
