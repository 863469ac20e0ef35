"""What the exact fact checks of the ``-v3`` writing rewards flag, on honest texts and on corrupted ones (no model).

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.facts_audit [--show SOURCE_ID ...]

Counts the disagreements :func:`llm_coop_envs.writing.facts.fact_problems` finds, as the consistency
level counts them (names only in the texts whose names are checked):

- ``corrupted facts`` (:mod:`benchmarks.writing.hostile`) on each of the 20 sources with a genuine pair:
  consistency loses half its score per disagreement, so two or more fail it;
- the genuine pairs of ``benchmarks/writing/genuine.py`` (every flag is a false positive);
- the dataset's own TL;DR of every post, checked against its post (the author's own words: a flag is
  almost always a false positive), listed one by one so that a change can be compared text by text;
- every sentence of every post and abstract checked against the rest of its source (a harsher test:
  the sentence best matching it is another statement of the same author, which never contradicts it).

Pure Python: loads neither torch nor the language model.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

from benchmarks.writing.hostile import corrupt
from llm_coop_envs.writing import facts
from llm_coop_envs.writing.items import Item, arxiv_item, tldr_item

CHECK_NAMES = {"tldr": (True, True), "arxiv": (False, True)}
"""Which texts' names the consistency level checks (``LMCheck.check_names`` of each -v3 env)."""


def load(kind: str, data: Path | None = None) -> list[Item]:
    """The dataset's items (``tldr`` or ``arxiv``), from ``data`` or ``$LLM_COOP_DATA_DIR``."""
    data = data or Path(os.environ.get("LLM_COOP_DATA_DIR", "data"))
    name, make = ("tldr.jsonl", tldr_item) if kind == "tldr" else ("arxiv_abstracts.jsonl", arxiv_item)
    with open(data / name, encoding="utf-8") as handle:
        return [make(json.loads(line), k) for k, line in enumerate(handle) if line.strip()]


def source_of(item: Item) -> str:
    """The source the -v3 checks read: the title, then the post or abstract."""
    return f"{item.title}\n\n{item.source}" if item.title else item.source


def found(text: str, source: str, names: bool = True) -> list[str]:
    problems = facts.fact_problems(text, source)
    return [f"{kind}: {item}" for kind, items in problems.items() for item in items if kind != "names" or names]


def pairs(kind: str, items: list[Item]) -> dict[str, tuple[tuple[str, str], str]]:
    """Source id -> (genuine pair, source) for the sources with a genuine pair."""
    from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS

    by_id = {item.id: item for item in items}
    if kind == "tldr":
        return {tid: ((by_id[tid].reference or "", detail), source_of(by_id[tid]))
                for tid, detail in TLDR_DETAILS.items()}
    return {aid: (pair, source_of(by_id[aid])) for aid, pair in ARXIV_PAIRS.items()}


def pair_found(kind: str, pair: tuple[str, str], source: str) -> list[str]:
    return [f"{role}: {f}" for role, text, names in zip(("first", "second"), pair, CHECK_NAMES[kind])
            for f in found(text, source, names)]


def leave_one_out(items: list[Item]) -> tuple[int, int, list[str]]:
    """(sentences, sentences flagged, examples): each sentence of a source checked against the rest of it
    (numbers and names aside: another sentence need not repeat them)."""
    total = flagged = 0
    examples = []
    for item in items:
        parts = [p for p in re.split(r"(?<=[.!?])\s+|\n+", item.source) if len(p.split()) >= 4]
        for k, part in enumerate(parts):
            rest = " ".join(parts[:k] + parts[k + 1:])
            total += 1
            flips = facts.fact_problems(part, rest)["flipped"]
            if flips:
                flagged += 1
                examples.append(f"{item.id}: {part!r}: {flips}")
    return total, flagged, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", nargs="*", default=[],
                        help="print the corrupted pair and its findings for these sources")
    parser.add_argument("--list", help="write the flagged dataset TL;DRs (id and findings) to this JSON file")
    parser.add_argument("--leave-one-out", action="store_true",
                        help="also check every source sentence against the rest")
    args = parser.parse_args()
    listing = {}
    for kind in ("tldr", "arxiv"):
        items = load(kind)
        print(f"\n## {kind}\n\n| source | corrupted | genuine |\n|---|---|---|")
        for sid, (pair, source) in pairs(kind, items).items():
            corrupted = (corrupt(pair[0], source), corrupt(pair[1], source))
            bad, good = pair_found(kind, corrupted, source), pair_found(kind, pair, source)
            print(f"| {sid} | {len(bad)} | {len(good)} |")
            if sid in args.show:
                print(f"\n{sid} corrupted: {corrupted}\n  found: {bad}\n  genuine found: {good}\n")
        if kind == "tldr":
            flagged = {}
            for item in items:
                hits = found(item.reference or "", source_of(item), CHECK_NAMES["tldr"][0])
                if hits:
                    flagged[item.id] = hits
            listing = {"tldr": flagged}
            two = sum(len(v) >= 2 for v in flagged.values())
            flips = sum(any(h.startswith("flipped") for h in v) for v in flagged.values())
            print(f"\ndataset TL;DRs flagged: {len(flagged)} of {len(items)} ({two} with two or more; "
                  f"flipped statements on {flips})")
        if args.leave_one_out:
            total, hit, examples = leave_one_out(items)
            print(f"\nsource sentences flagged against the rest of their source: {hit} of {total}")
            listing[f"{kind} leave-one-out"] = examples
    if args.list:
        with open(args.list, "w") as handle:
            json.dump(listing, handle, indent=1)


if __name__ == "__main__":
    main()
