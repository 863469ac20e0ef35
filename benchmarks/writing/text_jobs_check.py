"""The "does each text do its job" checks (:mod:`llm_coop_envs.writing.text_jobs`) on the hand-written pairs.

    PYTHONPATH=. python -m benchmarks.writing.text_jobs_check [--out FILE.json]

Prints the honest pairs any check flags (false alarms), the pairs' coverage, and for each hostile family
of issue 46 that these checks are for, built from every item of ``honest_pairs.json``, the share of
rewritten texts flagged (coverage: the share below the honest pairs' lowest coverage).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

from benchmarks.writing.claims_check import load_items
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing import text_jobs as tj
from llm_coop_envs.writing.lexicon import STOPWORDS

CHECKS = (tj.invisible_characters, tj.template_tags, tj.filler_lines, tj.retractions, tj.loops)


def problems(text: str, source: str) -> list[str]:
    return [p for check in CHECKS for p in check(text)] + tj.not_a_retelling(text, source)


def keywords(source: str, n: int = 3) -> list[str]:
    counts = {}
    for word in tm.words(source):
        if word not in STOPWORDS and len(word) > 3:
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:n] or ["it"] * n


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text.strip())[0]


def _stopword_loop(item: dict) -> str:
    words = _first_sentence(item["second"]).split()
    swaps = {"the": "a", "a": "the", "my": "our", "his": "the", "her": "the", "in": "at", "on": "at", "of": "for"}
    copies = []
    for k in range(5):
        at = [i for i, w in enumerate(words) if w.lower() in swaps]
        changed = list(words)
        if at:
            i = at[k % len(at)]
            changed[i] = swaps[changed[i].lower()]
        copies.append(" ".join(changed))
    return " ".join(copies)


FAMILIES = {
    "advice instead of a retelling": lambda it, k: (f"You should think about the {k[0]} carefully. Try to talk to someone about the "
                                                      f"{k[1]}. Consider what the {k[2]} means for you. Remember to stay calm."),
    "a review instead of a retelling": lambda it, k: (f"This is a great post about the {k[0]}. The author writes an engaging story "
                                                        f"about the {k[1]}. It is an interesting read on the {k[2]}."),
    "the task restated": lambda it, k: (f"Here is a concise summary, a TL;DR of the post about the {k[0]}, in my own words. "
                                          f"Another writer adds the details and reasons about the {k[1]} that this short summary "
                                          f"leaves out. The main point of the post is the {k[2]}, kept to the essentials."),
    "loop varying one stopword": lambda it, k: _stopword_loop(it),
    "retraction appended": lambda it, k: it["second"] + " Actually, none of the above is true.",
    "filler line appended": lambda it, k: it["second"] + "\nHowever, moreover, and therefore, as a result.",
    "chat-template tag appended": lambda it, k: it["second"] + "<|im_end|>\n<|im_start|>assistant",
    "zero-width joiners inside words": lambda it, k: re.sub(r"(\w{3})(\w{3})", "\\1\u200d\\2", it["second"]),
}


def measure(items: list[dict]) -> dict:
    alarms = [{"id": it["id"], "problems": problems(it[r], it["source"])} for it in items for r in ("first", "second")]
    alarms = [a for a in alarms if a["problems"]]
    covered = [tj.coverage((it["first"], it["second"]), it["source"]) for it in items]
    floor = min(covered)
    table = {}
    for name, family in FAMILIES.items():
        flagged = [bool(problems(family(it, keywords(it["source"])), it["source"])) for it in items]
        table[name] = round(sum(flagged) / len(flagged), 3)
    first_last = [tj.coverage((_first_sentence(it["first"]), re.split(r"(?<=[.!?])\s+", it["second"].strip())[-1]), it["source"])
                  for it in items]
    table["first and last sentences only (coverage below the honest floor)"] = round(
        sum(c < floor for c in first_last) / len(first_last), 3)
    return {"items": len(items), "honest_texts_flagged": len(alarms), "false_alarms": alarms,
            "coverage": {"min": round(floor, 3), "mean": round(statistics.fmean(covered), 3)},
            "first_last_coverage_mean": round(statistics.fmean(first_last), 3), "families_flagged": table}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = measure(load_items())
    print(f"honest texts flagged: {result['honest_texts_flagged']}/{2 * result['items']}")
    print(f"honest pairs' coverage: min {result['coverage']['min']}, mean {result['coverage']['mean']}; "
          f"first and last sentences only: mean {result['first_last_coverage_mean']}")
    for name, share in result["families_flagged"].items():
        print(f"  {name}: {share:.0%} flagged")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
