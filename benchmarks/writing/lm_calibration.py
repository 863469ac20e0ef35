"""The distributions the ``-v3`` thresholds come from: each measurement on genuine texts and on each hostile family.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.lm_calibration [--posts 60] [--json out.json]

Every measurement of the ``-v3`` levels is computed for every pair, gates or not (the env stops at
the first failed level, which hides the later numbers): the worse text's fluency (mean log-prob per
token), each text's PMI with the source and off-source share, the redundancy of the second text given
the first, the arXiv role gap, the exact fact checks and the form gates. Rows: the genuine pairs,
each family of :mod:`benchmarks.writing.hostile`, and the dataset's own TL;DRs paired with the genuine
detail texts' neighbours (first ``--posts`` posts: the author's TL;DR alone, scored as a first text).
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
from llm_coop_envs.writing.lm_levels import off_source_share, requests
from llm_coop_envs.writing.reward import PairTexts

MEASURES = ("fluency", "pmi_min", "pmi_max", "off_max", "redundancy", "role_gap", "facts", "templated", "unfinished2")


def measure(pair: PairTexts, scores, check) -> dict[str, float]:
    """Every -v3 measurement of one pair (see the module docstring)."""
    per_token = [scores[2 * k].total / max(len(scores[2 * k]), 1) for k in range(2)]
    pmi = [(scores[2 * k + 1].total - scores[2 * k].total) / max(len(scores[2 * k]), 1) for k in range(2)]
    off = [off_source_share(scores[2 * k], scores[2 * k + 1], pair.texts[k], check.sentence_pmi) for k in range(2)]
    found = [facts.fact_problems(t, pair.source) for t in pair.texts]
    n_facts = sum(len(v) for k, f in enumerate(found) for kind, v in f.items() if kind != "names" or check.check_names[k])
    return {
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
    parser.add_argument("--envs", nargs="+", default=["tldr-v3", "arxiv_intro-v3"])
    parser.add_argument("--posts", type=int, default=40)
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
        for name, pairs in found.items():
            rows = [measure(p, task.lm.score(requests(p)), check) for p in pairs]
            dump[env_id][name] = rows
            cells = []
            for m in MEASURES:
                values = sorted(r[m] for r in rows)
                cells.append(f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(dump, handle, indent=1)


if __name__ == "__main__":
    main()
