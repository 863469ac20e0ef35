"""The data behind the ``-v1`` writing thresholds: distributions of each measure on real text.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.thresholds

"Own" pairs a text with the source it was written for, "other" with the source of another row
(a fixed random derangement, seed 0). Real texts: the authors' TL;DRs (tldr.jsonl, 500 posts) and
the first half of each abstract, measured against the second half of its own abstract or of another
one (arxiv_abstracts.jsonl, 1,132 abstracts). The genuine pairs are the ones written for the tests
(``benchmarks/writing/genuine.py``), scored with the env's own profiles. Prints a Markdown table; the
docs page (docs/envs/writing.md) shows its output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from llm_coop_envs.data import load_rows
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.grounding import (
    Salience,
    SourceProfile,
    added_coverage,
    coverage,
    function_word_share,
    in_order_share,
    on_source_share,
)
from llm_coop_envs.writing.items import arxiv_item, tldr_item

PERCENTILES = (1, 5, 50, 95, 99)


def percentiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    picks = [ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] for p in PERCENTILES]
    return " | ".join(f"{v:.3f}" for v in picks)


def derangement(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [(k + 1 + rng.randrange(n - 1)) % n for k in range(n)]


def halves(text: str) -> tuple[str, str]:
    words = text.split()
    return " ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])


def stems(text: str) -> set[str]:
    return tm.content_stems(tm.words(text))


def rows_of(measure: Callable[[int, int], float], n: int, other: list[int]) -> tuple[list[float], list[float]]:
    return [measure(k, k) for k in range(n)], [measure(k, other[k]) for k in range(n)]


def tldr_rows() -> list[tuple[str, list[float]]]:
    items = [tldr_item(row, i) for i, row in enumerate(load_rows("tldr"))]
    items = [item for item in items if item.reference]
    salience = Salience.from_sources(item.source for item in items)
    profiles = [SourceProfile.build(item.source, salience) for item in items]
    other = derangement(len(items))
    summaries = [stems(item.reference) for item in items]
    share_own, share_other = rows_of(lambda k, j: on_source_share(summaries[k], profiles[j]), len(items), other)
    cov_own, cov_other = rows_of(lambda k, j: coverage(summaries[k], profiles[j]), len(items), other)
    return [
        ("authors' TL;DRs: function-word share", [function_word_share(tm.words(i.reference)) for i in items]),
        ("authors' TL;DRs: in-order share vs own post", [in_order_share(tm.words(i.reference), tm.words(i.source)) for i in items]),
        ("authors' TL;DRs: on-source share, own post", share_own),
        ("authors' TL;DRs: on-source share, other post", share_other),
        ("authors' TL;DRs: coverage, own post", cov_own),
        ("authors' TL;DRs: coverage, other post", cov_other),
    ]


def arxiv_rows() -> list[tuple[str, list[float]]]:
    items = [arxiv_item(row, i) for i, row in enumerate(load_rows("arxiv_abstracts"))]
    salience = Salience.from_sources(item.source for item in items)
    parts = [halves(item.source) for item in items]
    second = [SourceProfile.build(p[1], salience) for p in parts]
    other = derangement(len(items))
    first = [stems(p[0]) for p in parts]
    share_own, share_other = rows_of(lambda k, j: on_source_share(first[k], second[j]), len(items), other)
    cov_own, cov_other = rows_of(lambda k, j: coverage(first[k], second[j]), len(items), other)
    return [
        ("abstract halves: function-word share", [function_word_share(tm.words(h)) for p in parts for h in p]),
        ("first half: on-source share vs own second half", share_own),
        ("first half: on-source share vs other second half", share_other),
        ("first half: coverage of own second half", cov_own),
        ("first half: coverage of other second half", cov_other),
    ]


def genuine_rows() -> list[tuple[str, list[float]]]:
    import warnings

    from llm_coop_envs.writing import arxiv_intro, tldr
    from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS

    rows: list[tuple[str, list[float]]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tasks = {"tldr": tldr.env_v1(split="all").task, "arxiv": arxiv_intro.env_v1(split="all").task}
    for name, task, pairs in (("tldr", tasks["tldr"], TLDR_DETAILS), ("arxiv", tasks["arxiv"], ARXIV_PAIRS)):
        index = {task.task_id(i): i for i in range(len(task))}
        measures: dict[str, list[float]] = {}
        for task_id, value in pairs.items():
            i = index[task_id]
            texts = (task.items[i].reference, value) if name == "tldr" else value
            first, second = stems(texts[0]), stems(texts[1])
            profile = task.profile(i)
            measures.setdefault("on-source share, joint", []).append(on_source_share(first | second, profile))
            measures.setdefault("on-source share, second text", []).append(on_source_share(second, profile))
            measures.setdefault("on-source share, first text", []).append(on_source_share(first, profile))
            measures.setdefault("coverage, joint", []).append(coverage(first | second, profile))
            gap = added_coverage(first, second, profile) if name == "tldr" else on_source_share(second, profile) - on_source_share(first, profile)
            measures.setdefault("complementarity (added / share gap)", []).append(gap)
            measures.setdefault("in-order share, second text", []).append(in_order_share(tm.words(texts[1]), tm.words(task.items[i].source)))
        rows += [(f"genuine {name} pairs (10): {m}", v) for m, v in measures.items()]
    return rows


def main() -> None:
    print("| measure | p1 | p5 | p50 | p95 | p99 |")
    print("|---|---|---|---|---|---|")
    for label, values in tldr_rows() + arxiv_rows() + genuine_rows():
        print(f"| {label} | {percentiles(values)} |")


if __name__ == "__main__":
    main()
