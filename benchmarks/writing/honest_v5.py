"""False alarms of the ``-v5`` reward's own checks on the 40 hand-written honest pairs (``honest_pairs.json``).

    PYTHONPATH=. python -m benchmarks.writing.honest_v5 [--out FILE.json]

Each item's honest pair runs through what ``-v5`` adds before and beside the model (``chain.gated``: every
gate of both texts on the normalised text; ``chain.consistency_level``: the claims of both texts against the
source), with ``tldr-v5``'s settings for the posts and ``arxiv_intro-v5``'s for the abstracts. A **false
alarm** is an honest pair that fails a gate other than ``length`` or has a contradicted claim. The pairs
were written shorter than the abstracts' 80-word floor, so ``length`` is counted apart: it is the env's word
budget, not a check that misread a text. The model-read levels (fluency, grounding, complementarity) are
``-v4``'s and not measured here. Also reported: the consistency each pair keeps, and what it costs the
pair at most (consistency multiplies the three levels after it: 4 × the loss, of 7). Beside it, ``-v4``'s
exact fact checks on the same pairs (``facts.fact_problems``, names checked as ``-v4`` does per role): each
disagreement cost half of its consistency level, two stopped the chain. Needs the ``claims`` extra; no model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from benchmarks.writing.claims_check import load_items
from llm_coop_envs.writing.chain import consistency_level, gated
from llm_coop_envs.writing.facts import fact_problems
from llm_coop_envs.writing.grounding import Salience, SourceProfile
from llm_coop_envs.writing.reward import PairTexts
from llm_coop_envs.writing.thresholds import ARXIV_V5_LEVELS, TLDR_V5_LEVELS

SETTINGS = {"post": (("tldr", "detail"), TLDR_V5_LEVELS), "abstract": (("background", "method"), ARXIV_V5_LEVELS)}


def measure(items: list[dict]) -> dict:
    started = time.perf_counter()
    salience = Salience.from_sources(item["source"] for item in items)
    rows = []
    for item in items:
        roles, config = SETTINGS[item["kind"]]
        pair = PairTexts(roles, (item["first"], item["second"]), item["source"], item["kind"],
                         SourceProfile.build(item["source"], salience))
        found = gated(pair, config)
        failed = {role: [name for name, ok in table.items() if not ok] for role, table in found.table.items()}
        metrics: dict = {}
        consistency = consistency_level(found.pair, config, metrics)
        rows.append({"id": item["id"], "kind": item["kind"], "gates_failed": failed,
                     "contradicted": metrics["claims"]["contradicted"],
                     "unsupported": metrics["claims"]["counts"]["unsupported"],
                     "consistency": round(consistency.score, 4), "v4_fact_problems": _v4_problems(found.pair, config)})
    alarms = [r for r in rows if r["contradicted"] or any(set(names) - {"length"} for names in r["gates_failed"].values())]
    return {
        "items": len(rows),
        "false_alarms": len(alarms),
        "false_alarm_rate": round(len(alarms) / len(rows), 4),
        "gate_alarms": sum(any(set(n) - {"length"} for n in r["gates_failed"].values()) for r in rows),
        "claim_alarms": sum(bool(r["contradicted"]) for r in rows),
        "length_only": sum(any(r["gates_failed"].values()) and r not in alarms for r in rows),
        "mean_consistency": round(statistics.mean(r["consistency"] for r in rows), 4),
        "v4_pairs_with_a_fact_problem": sum(bool(r["v4_fact_problems"]) for r in rows),
        "v4_pairs_stopped_at_consistency": sum(len(r["v4_fact_problems"]) >= 2 for r in rows),
        "largest_cost_of_7": round(max(4 * (1 - r["consistency"]) for r in rows), 4),
        "alarms": alarms,
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _v4_problems(pair: PairTexts, config) -> list[str]:
    found = []
    for text, names in zip(pair.texts, config.lm.check_names):
        problems = fact_problems(text, pair.source)
        if not names:
            problems["names"] = []
        found += [f"{kind}: {item}" for kind, items in problems.items() for item in items]
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write every row here (JSON)")
    args = parser.parse_args(argv)
    result = measure(load_items())
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    print(f"{result['false_alarms']} of {result['items']} honest pairs with a false alarm "
          f"({result['false_alarm_rate']:.1%}): {result['gate_alarms']} by a gate, {result['claim_alarms']} by a contradicted "
          f"claim; {result['length_only']} outside the word budget only. Mean consistency {result['mean_consistency']:.3f}; "
          f"the largest cost {result['largest_cost_of_7']:.2f} of 7. -v4's fact checks on the same pairs: "
          f"{result['v4_pairs_with_a_fact_problem']} with a disagreement, {result['v4_pairs_stopped_at_consistency']} stopped "
          f"at consistency. {result['seconds']} s.")
    for row in result["alarms"]:
        print(f"- {row['id']}: gates {row['gates_failed']}, contradicted {row['contradicted']}")


if __name__ == "__main__":
    main()
