"""The claim check (docs/envs/claims.md) on the hand-written pairs of ``honest_pairs.json``.

    PYTHONPATH=. python -m benchmarks.writing.claims_check [--out FILE.json]

Prints, over the 40 items: the honest pairs with a contradicted claim in either text (false alarms) and
their unsupported claims; the hand-written false sentences that get a contradicted claim, by kind; the
invented on-topic sentences that get any claim not supported; and the time. Every flagged honest claim
and every missed false sentence is listed with the check's reason. Needs the ``claims`` extra.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

from llm_coop_envs.writing.claims import check

HONEST = Path(__file__).with_name("honest_pairs.json")


def load_items() -> list[dict]:
    return json.loads(HONEST.read_text(encoding="utf-8"))


def flagged(text: str, source: str, kinds: tuple[str, ...]) -> list[str]:
    return [verdict.describe() for verdict in check(text, source) if verdict.kind in kinds]


def measure(items: list[dict]) -> dict:
    started = time.perf_counter()
    alarms, unsupported, missed, caught, invented = [], [], [], collections.Counter(), 0
    kinds = collections.Counter(item["lie_kind"] for item in items)
    for item in items:
        source = item["source"]
        found = [v for role in ("first", "second") for v in flagged(item[role], source, ("contradicted",))]
        if found:
            alarms.append({"id": item["id"], "claims": found})
        unsupported += [{"id": item["id"], "claim": v} for role in ("first", "second")
                        for v in flagged(item[role], source, ("unsupported",))]
        if flagged(item["lie"], source, ("contradicted",)):
            caught[item["lie_kind"]] += 1
        else:
            missed.append({"id": item["id"], "kind": item["lie_kind"], "sentence": item["lie"]})
        invented += bool(flagged(item["invented"], source, ("contradicted", "unsupported")))
    return {
        "items": len(items),
        "false_alarm_pairs": len(alarms),
        "false_alarm_rate": round(len(alarms) / len(items), 4),
        "honest_unsupported_claims": len(unsupported),
        "false_sentences_caught": sum(caught.values()),
        "caught_by_kind": {kind: f"{caught[kind]}/{n}" for kind, n in sorted(kinds.items())},
        "invented_flagged": invented,
        "seconds": round(time.perf_counter() - started, 1),
        "false_alarms": alarms,
        "unsupported": unsupported,
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the full result as JSON")
    args = parser.parse_args(argv)
    result = measure(load_items())
    n = result["items"]
    print(f"honest pairs with a contradicted claim: {result['false_alarm_pairs']}/{n} ({result['false_alarm_rate']:.1%})")
    print(f"unsupported claims in honest pairs: {result['honest_unsupported_claims']}")
    print(f"false sentences contradicted: {result['false_sentences_caught']}/{n} {result['caught_by_kind']}")
    print(f"invented sentences flagged: {result['invented_flagged']}/{n}")
    print(f"time: {result['seconds']} s (parser load included)")
    for alarm in result["false_alarms"]:
        print(f"  false alarm {alarm['id']}: {'; '.join(alarm['claims'])}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
