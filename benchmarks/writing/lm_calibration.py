"""The distributions the ``-v3`` thresholds come from: each measurement on genuine texts and on each hostile family.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.lm_calibration [--posts 60] [--json out.json]

Every measurement of the ``-v3`` levels is computed for every pair, gates or not (the env stops at
the first failed level, which hides the later numbers): the worse text's fluency (mean log-prob per
token), each text's PMI with the source and off-source share, the redundancy of the second text given
the first, the arXiv role gap, the exact fact checks and the form gates. Rows: the genuine pairs,
each family of :mod:`benchmarks.writing.hostile`, and the dataset's own TL;DRs paired with the genuine
detail texts' neighbours (first ``--posts`` posts: the author's TL;DR, scored as a first text; its own measurements are reported
separately, and the exact checks of the TL;DRs over every post).
Prints per group the minimum, median and maximum of each measurement, and the time the model took.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

from benchmarks.writing.hostile import FAMILIES, ONLY, cases
from llm_coop_envs.writing import facts
from llm_coop_envs.writing.lm_levels import half_pmis, model_scores, off_source_share, requests
from llm_coop_envs.writing.reward import PairTexts

MEASURES = ("fluency", "pmi_min", "pmi_max", "pmi_second", "off_max", "redundancy", "role_gap", "role_halves",
            "facts", "in_order", "templated")
FIRST_TEXT = ("fluency_first", "pmi_first", "facts_first", "in_order_first", "trails_off_first")
"""What is reported for the dataset's own TL;DRs (as first texts; their partner is another post's detail)."""


def measure(pair: PairTexts, scores, check) -> dict[str, float]:
    """Every -v3 measurement of one pair (see the module docstring)."""
    per_token = [scores[2 * k].total / max(len(scores[2 * k]), 1) for k in range(2)]
    pmi = [(scores[2 * k + 1].total - scores[2 * k].total) / max(len(scores[2 * k]), 1) for k in range(2)]
    off = [off_source_share(scores[2 * k], scores[2 * k + 1], pair.texts[k].strip(), check.sentence_pmi) for k in range(2)]
    found = [facts.fact_problems(t, pair.source) for t in pair.texts]
    n_facts = sum(len(v) for k, f in enumerate(found) for kind, v in f.items() if kind != "names" or check.check_names[k])
    halves = [half_pmis(scores[2 * k], scores[2 * k + 1]) for k in range(2)]
    in_order = [facts.content_in_order(facts.skeleton(t), pair.source) for t in pair.texts]
    counted = [share if words >= check.min_content_words else 0.0 for share, words in in_order]
    first_facts = sum(len(v) for kind, v in found[0].items() if kind != "names" or check.check_names[0])
    return {
        "fluency_first": per_token[0], "pmi_first": pmi[0], "facts_first": first_facts, "in_order_first": counted[0],
        "trails_off_first": float(facts.trails_off(pair.texts[0])),
        "pmi_second": pmi[1], "role_halves": min(halves[1]) - max(halves[0]), "in_order": max(counted),
        "fluency": min(per_token), "pmi_min": min(pmi), "pmi_max": max(pmi), "off_max": max(off),
        "redundancy": (scores[4].total - scores[3].total) / max(len(scores[3]), 1), "role_gap": pmi[1] - pmi[0],
        "facts": n_facts, "templated": max(facts.templated_share(t) for t in pair.texts),
        "unfinished2": float(facts.unfinished(pair.texts[1])), "mixed": float(any(facts.mixed_script_words(t) for t in pair.texts)),
    }


def groups(env_id: str, posts: int) -> tuple[object, dict[str, list[PairTexts]]]:
    import llm_coop_envs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(env_id, split="all").task
    kind = "tldr" if env_id.startswith("tldr") else "arxiv"
    found: dict[str, list[PairTexts]] = {}
    index = {task.task_id(i): i for i in range(len(task))}
    for task_id, case in cases(kind, task):
        pairs = {"genuine": case.genuine, **{n: f(case) for n, f in FAMILIES.items() if ONLY.get(n, kind) == kind}}
        for name, texts in pairs.items():
            found.setdefault(name, []).append(task.pair(index[task_id], dict(zip(task.agents, texts))))
    if kind == "tldr":
        details = [c.genuine[1] for _, c in cases(kind, task)]
        for i in range(min(posts, len(task))):
            item = task.items[i]
            # The author's TL;DR is what is calibrated; the partner is a genuine detail text of another post.
            found.setdefault("dataset TL;DR (first text)", []).append(
                task.pair(i, dict(zip(task.agents, (item.reference or "", details[i % len(details)])))))
    return task, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["tldr-v4", "arxiv_intro-v4"])
    parser.add_argument("--posts", type=int, default=100)
    parser.add_argument("--json")
    args = parser.parse_args()
    dump = {}
    for env_id in args.envs:
        task, found = groups(env_id, args.posts)
        check = task.config.lm
        start, before = time.perf_counter(), task.lm.forward_tokens
        everything = [p for pairs in found.values() for p in pairs]
        task.lm.score([r for p in everything for r in requests(p)])
        took = time.perf_counter() - start
        print(f"\n## {env_id}: {len(everything)} pairs, {task.lm.forward_tokens - before} tokens through the model in {took:.1f} s\n")
        print("| group | " + " | ".join(MEASURES) + " |\n|---|" + "---|" * len(MEASURES))
        dump[env_id] = {}
        dataset = "dataset TL;DR (first text)"
        for name, pairs in found.items():
            rows = [measure(p, model_scores(p, task.lm), check) for p in pairs]
            dump[env_id][name] = rows
            if name != dataset:
                print(f"| {name} | " + " | ".join(_cell(rows, m) for m in MEASURES) + " |")
        if dataset in dump[env_id]:
            rows = dump[env_id][dataset]
            print(f"\nThe dataset's own TL;DRs ({len(rows)} posts), as first texts: min / median / max, and the share "
                  f"of posts with any fact flagged, with two or more, and cut off:\n")
            print("| " + " | ".join(FIRST_TEXT) + " |\n|" + "---|" * len(FIRST_TEXT))
            print("| " + " | ".join(_cell(rows, m) for m in FIRST_TEXT) + " |")
            flagged = [r["facts_first"] for r in rows]
            print(f"\nfacts flagged: {sum(f >= 1 for f in flagged) / len(rows):.1%} one or more, "
                  f"{sum(f >= 2 for f in flagged) / len(rows):.1%} two or more; trailing off: "
                  f"{sum(r['trails_off_first'] for r in rows) / len(rows):.1%}")
            print(exact_checks_of_every_tldr(task))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(dump, handle, indent=1)


def exact_checks_of_every_tldr(task) -> str:
    """The exact checks (facts, trailing off, source words in order) of the dataset's TL;DR of every post."""
    check, counts, kinds = task.config.lm, [], {"numbers": 0, "names": 0, "flipped": 0}
    cut = glued = 0
    for index, item in enumerate(task.items):
        text = item.reference or ""
        source = task.pair(index, dict(zip(task.agents, (text, "")))).source
        found = facts.fact_problems(text, source)
        counts.append(sum(len(v) for kind, v in found.items() if kind != "names" or check.check_names[0]))
        for kind, values in found.items():
            kinds[kind] += bool(values)
        cut += facts.trails_off(text)
        share, words = facts.content_in_order(facts.skeleton(text), source)
        glued += words >= check.min_content_words and share > check.max_content_in_order
    n = len(counts)
    return (f"\nExact checks of the dataset's TL;DR of all {n} posts: no fact flagged {sum(c == 0 for c in counts) / n:.1%}, "
            f"one {sum(c == 1 for c in counts) / n:.1%}, two or more {sum(c >= 2 for c in counts) / n:.1%} (posts with a "
            f"flagged number {kinds['numbers'] / n:.1%}, name {kinds['names'] / n:.1%}, flipped statement "
            f"{kinds['flipped'] / n:.1%}); trailing off {cut / n:.1%}; source words glued in order {glued / n:.1%}.")


def _cell(rows: list[dict[str, float]], measure_name: str) -> str:
    values = sorted(r[measure_name] for r in rows)
    return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"


if __name__ == "__main__":
    main()
