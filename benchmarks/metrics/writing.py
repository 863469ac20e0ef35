"""Writing metrics for a joint reply: ROUGE against the reference, length ratio, overlap.

Tokens, stems and Jaccard come from the writing env (:mod:`llm_coop_envs.writing.text_metrics`),
so a metric here counts words exactly as the env's rewards do; ROUGE is the env's too. Reward
components are not recomputed here: the env reports them in ``infos[agent]["reward_components"]``
and the baselines record them per episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llm_coop_envs.writing.rouge import ROUGE_TYPES, rouge_f1
from llm_coop_envs.writing.text_metrics import content_stems, jaccard, words


def rouge(prediction: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L F-measures of ``prediction`` against ``reference`` (0.0 when either is empty):
    the env's own ROUGE (:func:`llm_coop_envs.writing.rouge.rouge_f1`), so a metric and a reward agree."""
    if not prediction.strip() or not reference.strip():
        return dict.fromkeys(ROUGE_TYPES, 0.0)
    return rouge_f1(prediction, reference)


def length_ratio(first: str, second: str) -> float:
    """Words in ``second`` per word in ``first`` (0.0 when ``first`` has none)."""
    n_first = len(words(first))
    return len(words(second)) / n_first if n_first else 0.0


def overlap(first: str, second: str) -> float:
    """Jaccard overlap of the content-word stems of two texts (0 = disjoint, 1 = same vocabulary)."""
    return jaccard(content_stems(words(first)), content_stems(words(second)))


def writing_metrics(replies: Mapping[str, str], roles: Sequence[str], reference: str | None = None) -> dict[str, float]:
    """Metrics of one joint reply: ``length_ratio`` and ``overlap`` of the last role against the first,
    and, given the reference (e.g. the author's TL;DR), ``rouge*`` of the joint text (roles in order)."""
    first, last = replies.get(roles[0], ""), replies.get(roles[-1], "")
    metrics = {"length_ratio": length_ratio(first, last), "overlap": overlap(first, last)}
    if reference is not None:
        joint = "\n\n".join(replies.get(role, "") for role in roles)
        metrics |= {f"{name}": value for name, value in rouge(joint, reference).items()}
    return metrics


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            out[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson on tie-averaged ranks); None when either side is constant."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"spearman needs two sequences of the same length >= 2, got {len(x)} and {len(y)}.")
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else None
