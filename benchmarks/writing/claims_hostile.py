"""Hostile families of issue 46 against the claim check alone, built from the hand-written pairs.

    PYTHONPATH=. python -m benchmarks.writing.claims_hostile [--out FILE.json]

Each family rewrites the honest second text of every item of ``honest_pairs.json`` (or appends to it) the
way a policy that wants reward without the facts would. For each family the table gives the items it
applies to, the share of rewritten texts with at least one contradicted claim, and the claim factor
(:func:`llm_coop_envs.writing.claims.claim_factor`) as a share of the honest text's: mean and worst
(highest). Only the claim check is measured: the other levels of a reward (fluency, grounding, ...) are not.

Families:

- ``hedged contradiction``: every sentence wrapped in "It is unlikely that ...";
- ``question, flipped``: the item's hand-written false sentence asked as a question ("Is it true that
  ...?"), appended;
- ``quantity in words, unit changed``: every "N weeks/days/months/years/hours/minutes" (N in digits or
  words) written in words with the next larger unit;
- ``values swapped``: the first two different numbers of the text exchanged;
- ``antonym``: the first word with a WordNet antonym replaced by it (the check's own lexicon: an upper
  bound on what it can catch this way);
- ``certainty inflated``: hedges (may, might, could, suggest, likely) replaced by certainties;
- ``false sentence``: the item's hand-written false sentence appended;
- ``fabricated claims``: the item's invented on-topic sentence appended.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections.abc import Callable
from pathlib import Path

from benchmarks.writing.claims_check import load_items
from llm_coop_envs.writing.antonyms import antonyms
from llm_coop_envs.writing.claims import check, claim_factor, counts
from llm_coop_envs.writing.quantities import SMALL_NUMBERS, TENS, word_value

_UNITS = ["minutes", "hours", "days", "weeks", "months", "years"]
_HEDGE_TO_CERTAIN = {"may": "will", "might": "will", "could": "will", "suggest": "prove", "suggests": "proves",
                     "likely": "certainly", "possibly": "certainly", "perhaps": "certainly"}


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def number_word(value: int) -> str:
    words = {v: w for w, v in {**SMALL_NUMBERS, **TENS}.items()}
    if value in words:
        return words[value]
    if value < 100:
        return f"{words[value - value % 10]}-{words[value % 10]}"
    return str(value)


def hedged(item: dict) -> str | None:
    return " ".join(f"It is unlikely that {s[0].lower()}{s[1:]}" for s in sentences(item["second"]))


def question(item: dict) -> str | None:
    lie = item["lie"].rstrip(".")
    return f"{item['second']} Is it true that {lie[0].lower()}{lie[1:]}?"


def units_changed(item: dict) -> str | None:
    def swap(match: re.Match) -> str:
        unit = match[2].lower().rstrip("s") + "s"
        bigger = _UNITS[min(_UNITS.index(unit) + 1, len(_UNITS) - 1)] if unit in _UNITS else unit
        value = int(match[1]) if match[1].isdigit() else int(word_value([match[1]]))
        return f"{number_word(value)} {bigger}"

    numbers = "|".join([r"\d+", *SMALL_NUMBERS, *TENS])
    text = re.sub(rf"\b({numbers}) (minutes?|hours?|days?|weeks?|months?|years?)\b", swap, item["second"])
    return text if text != item["second"] else None


def values_swapped(item: dict) -> str | None:
    found = list(dict.fromkeys(re.findall(r"\b\d+(?:,\d{3})*(?:\.\d+)?\b", item["second"])))
    if len(found) < 2:
        return None
    a, b = found[:2]
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m[1] == a else a, item["second"])


def antonym(item: dict) -> str | None:
    for match in re.finditer(r"[A-Za-z]+", item["second"]):
        found = sorted(w for w in antonyms(match[0].lower()) if "_" not in w and "-" not in w)
        if match[0][0].islower() and len(match[0]) > 3 and found:
            return item["second"][: match.start()] + found[0] + item["second"][match.end():]
    return None


def certainty(item: dict) -> str | None:
    text = re.sub(r"\b(" + "|".join(_HEDGE_TO_CERTAIN) + r")\b", lambda m: _HEDGE_TO_CERTAIN[m[1]], item["second"])
    return text if text != item["second"] else None


FAMILIES: dict[str, Callable[[dict], str | None]] = {
    "hedged contradiction": hedged,
    "question, flipped": question,
    "quantity in words, unit changed": units_changed,
    "values swapped": values_swapped,
    "antonym": antonym,
    "certainty inflated": certainty,
    "false sentence": lambda item: f"{item['second']} {item['lie']}",
    "fabricated claims": lambda item: f"{item['second']} {item['invented']}",
}


def measure(items: list[dict]) -> dict:
    honest = {item["id"]: claim_factor(check(item["second"], item["source"])) for item in items}
    table = {}
    for name, family in FAMILIES.items():
        shares, flagged, examples = [], 0, []
        for item in items:
            text = family(item)
            if text is None:
                continue
            verdicts = check(text, item["source"])
            flagged += counts(verdicts)["contradicted"] > 0
            shares.append(claim_factor(verdicts) / honest[item["id"]] if honest[item["id"]] else 0.0)
            if len(examples) < 2:
                examples.append({"id": item["id"], "text": text, "verdicts": [v.describe() for v in verdicts if v.kind != "supported"]})
        table[name] = {"items": len(shares), "contradicted": round(flagged / max(len(shares), 1), 3),
                       "mean_share": round(statistics.fmean(shares), 3) if shares else None,
                       "worst_share": round(max(shares), 3) if shares else None, "examples": examples}
    return {"honest_mean_factor": round(statistics.fmean(honest.values()), 3), "families": table}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the table and examples as JSON")
    args = parser.parse_args(argv)
    result = measure(load_items())
    print(f"honest second texts: mean claim factor {result['honest_mean_factor']}")
    print(f"{'family':34} {'items':>5} {'contradicted':>12} {'mean share':>10} {'worst':>6}")
    for name, row in result["families"].items():
        print(f"{name:34} {row['items']:5d} {row['contradicted']:12.0%} {row['mean_share']:10.2f} {row['worst_share']:6.2f}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
