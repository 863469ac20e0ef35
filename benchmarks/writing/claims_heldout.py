"""The -v5 checks on honest pairs they were not tuned on: the project's genuine pairs (``genuine.py``).

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.claims_heldout [--out FILE.json]

For the 10 posts (the author's own TL;DR and a hand-written detailed summary) and the 10 abstracts (a
hand-written background and methods pair) of :mod:`benchmarks.writing.genuine`, prints every claim the
claim check does not find supported and every problem the text-job checks find, and the pairs' coverage.
Every contradiction or text-job problem here is a false alarm.
"""

from __future__ import annotations

import argparse
import json
import statistics
import warnings
from pathlib import Path

import llm_coop_envs
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS
from benchmarks.writing.text_jobs_check import problems
from llm_coop_envs.writing import text_jobs
from llm_coop_envs.writing.claims import check


def pairs() -> list[tuple[str, tuple[str, str], str]]:
    """(task id, (first, second), source) for every genuine pair."""
    out = []
    for env_id, table in (("tldr-v2", None), ("arxiv_intro-v2", ARXIV_PAIRS)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # an older version warns: only its data is read
            task = llm_coop_envs.make(env_id, split="all").task
        items = {task.task_id(i): task.items[i] for i in range(len(task))}
        chosen = {tid: (items[tid].reference, detail) for tid, detail in TLDR_DETAILS.items()} if table is None else table
        out += [(tid, pair, items[tid].source) for tid, pair in chosen.items()]
    return out


def measure() -> dict:
    rows, covered = [], []
    for tid, pair, source in pairs():
        verdicts = [v for text in pair for v in check(text, source) if v.kind != "supported"]
        jobs = [p for text in pair for p in problems(text, source)]
        covered.append(text_jobs.coverage(pair, source))
        rows.append({"id": tid, "contradicted": [v.describe() for v in verdicts if v.kind == "contradicted"],
                     "unsupported": [v.describe() for v in verdicts if v.kind == "unsupported"], "text_jobs": jobs,
                     "coverage": round(covered[-1], 3)})
    return {"pairs": len(rows), "pairs_with_a_contradiction": sum(bool(r["contradicted"]) for r in rows),
            "pairs_with_a_text_job_problem": sum(bool(r["text_jobs"]) for r in rows),
            "unsupported_claims": sum(len(r["unsupported"]) for r in rows),
            "coverage": {"min": min(covered), "mean": round(statistics.fmean(covered), 3)}, "rows": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = measure()
    n = result["pairs"]
    print(f"pairs with a contradicted claim: {result['pairs_with_a_contradiction']}/{n}")
    print(f"pairs with a text-job problem: {result['pairs_with_a_text_job_problem']}/{n}")
    print(f"unsupported claims: {result['unsupported_claims']}; coverage min {result['coverage']['min']:.2f}, "
          f"mean {result['coverage']['mean']:.2f}")
    for row in result["rows"]:
        for line in row["contradicted"] + row["text_jobs"]:
            print(f"  {row['id']}: {line}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
