"""The distributions behind the sentence-order check of ``tldr-v2`` / ``arxiv_intro-v2``.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.order

Prints, with the thresholds of :class:`llm_coop_envs.writing.thresholds.OrderCheck`: how often real
author TL;DRs and the genuine pairs of the tests open with a dangling connective, and real texts
with a pronoun; the concordance
of the genuine second texts (and of author TL;DRs, an honest text that need not follow its post);
and, for every permutation of each genuine pair's sentences (within each text), the share the check
catches, by how scrambled the permutation is; and the share of single swaps of two neighbouring
sentences it flags. Deterministic; takes under a minute.
"""

from __future__ import annotations

import itertools
import statistics
import warnings

from llm_coop_envs.writing import arxiv_intro, tldr
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.order import SourceSentences, concordance, dangling_opener, order_problems, split_sentences
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS


def _quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    v = sorted(values)
    pick = lambda q: v[round(q * (len(v) - 1))]  # noqa: E731
    return f"n={len(v)}, min {v[0]:+.2f}, 10 % {pick(0.1):+.2f}, median {pick(0.5):+.2f}, mean {statistics.mean(v):+.2f}"


def _inverted_share(*orders: tuple[int, ...]) -> float:
    """Share of the within-text sentence pairs that the permutations put the other way round."""
    pairs = [(a, b) for order in orders for i, a in enumerate(order) for b in order[i + 1 :]]
    return sum(a > b for a, b in pairs) / len(pairs) if pairs else 0.0


def _caught(task, index: int, texts) -> bool:
    item = task.items[index]
    return bool(order_problems(task.agents, texts, item.source, task.profile(index), task.config.order, {}))


def author_tldrs(task) -> None:
    check = task.config.order
    openers, taus = 0, []
    for i, item in enumerate(task.items):
        if not item.reference:
            continue
        openers += dangling_opener(item.reference) is not None
        tau, pairs = concordance(item.reference, SourceSentences.build(item.source), task.profile(i), check.min_share)
        if tau is not None and pairs >= check.min_pairs:
            taus.append(tau)
    print(f"author TL;DRs: {openers} of {len(task)} open with a dangling connective; concordance with the post "
          f"(>= {check.min_pairs} pairs): {_quantiles(taus)}")


def real_openings(tasks) -> None:
    """How often real texts (posts, author TL;DRs, abstracts) open with a pronoun, by pronoun."""
    pronouns = ("they", "its", "their", "these", "those", "it", "this", "he", "she")
    counts, texts = dict.fromkeys(pronouns, 0), 0
    for task in tasks:
        for item in task.items:
            for text in (item.source, item.reference or ""):
                sentences = split_sentences(text)
                words = tm.words(sentences[0]) if sentences else []
                if not words:
                    continue
                texts += 1
                if words[0] in counts:
                    counts[words[0]] += 1
    print(f"real texts ({texts}) opening with: " + ", ".join(f"{p} {n}" for p, n in counts.items()))


def permutations(name: str, task, pairs: dict) -> None:
    index = {task.task_id(i): i for i in range(len(task))}
    check = task.config.order
    genuine_taus, genuine_caught, buckets, swaps = [], 0, {}, [0, 0]
    for tid, pair in pairs.items():
        i = index[tid]
        tau, n = concordance(pair[1], SourceSentences.build(task.items[i].source), task.profile(i), check.min_share)
        if tau is not None and n >= check.min_pairs:
            genuine_taus.append(tau)
        genuine_caught += _caught(task, i, pair)
        parts = [split_sentences(t) for t in pair]
        for p0, p1 in itertools.product(*(itertools.permutations(range(len(p))) for p in parts)):
            inverted = _inverted_share(p0, p1)
            if inverted == 0:
                continue
            texts = [" ".join(parts[0][k] for k in p0), " ".join(parts[1][k] for k in p1)]
            bucket = "< 1/3" if inverted < 1 / 3 else ("1/3-1/2" if inverted < 0.5 else ">= 1/2")
            counts = buckets.setdefault(bucket, [0, 0])
            counts[0] += _caught(task, i, texts)
            counts[1] += 1
        second = parts[1]
        for k in range(1, len(second) - 1):  # swap two neighbours, the opening sentence kept
            swapped = second[:k] + [second[k + 1], second[k]] + second[k + 2 :]
            swaps[0] += _caught(task, i, (pair[0], " ".join(swapped)))
            swaps[1] += 1
    print(f"{name}: genuine pairs flagged {genuine_caught} of {len(pairs)}; concordance of the second text: {_quantiles(genuine_taus)}")
    for bucket in ("< 1/3", "1/3-1/2", ">= 1/2"):
        caught, total = buckets.get(bucket, [0, 0])
        print(f"  permutations with {bucket} of sentence pairs inverted: caught {caught} of {total} ({caught / max(1, total):.0%})")
    print(f"  two neighbouring sentences of the second text swapped (opening kept): flagged {swaps[0]} of {swaps[1]}")


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tldr_task, arxiv_task = tldr.env_v2(split="all").task, arxiv_intro.env_v2(split="all").task
    index = {tldr_task.task_id(i): i for i in range(len(tldr_task))}
    print(f"OrderCheck: {tldr_task.config.order}")
    author_tldrs(tldr_task)
    real_openings((tldr_task, arxiv_task))
    permutations("tldr-v2", tldr_task, {tid: (tldr_task.items[index[tid]].reference, d) for tid, d in TLDR_DETAILS.items()})
    permutations("arxiv_intro-v2", arxiv_task, dict(ARXIV_PAIRS))


if __name__ == "__main__":
    main()
