"""Held-out families: never drawn for training, kept for out-of-distribution evaluation."""

from __future__ import annotations

import random

from llm_coop_envs.coding.procedural.draft import Draft, int_list, pick, sizes
from llm_coop_envs.coding.procedural.families.text import word_lists

GAMES = [("words", "word", "spelling game"), ("spells", "spell", "wizard duel"), ("answers", "answer", "quiz night")]


def letter_points(rng: random.Random, level: int) -> Draft:
    """aux scores a word by letter values only the helper sees; main totals, picks or ranks words."""
    items, item, game = pick(rng, GAMES)
    vowel, other = rng.randint(4, 7), rng.randint(1, 3)
    inputs = [(words,) for words in word_lists(rng, level)]
    points = f"a {item}'s points in the {game} (what aux returns)"
    if level == 1:
        name, params = f"total_{item}_points", items
        summary = f"Return the sum of {points} over all {items}."
        main = f"    return sum(aux(w) for w in {items})\n"
    elif level == 2:
        name, params = f"best_{item}", items
        summary = f"Return the {item} with the most points, counting {points}; the first one on ties, None when {items} is empty."
        main = f"    return max({items}, key=aux) if {items} else None\n"
    else:
        name, params = f"ranked_{items}", f"{items}, minimum"
        summary = (f"Return the {items} worth at least minimum points, counting {points}, ordered from most to fewest "
                   "points; ties keep their original order.")
        main = f"    return sorted((w for w in {items} if aux(w) >= minimum), key=aux, reverse=True)\n"
        inputs = [(words, rng.randint(8, 20)) for (words,) in inputs]
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=f"Return the points {item} is worth in the {game}.",
        helper_fact=f"In the {game} each vowel (a, e, i, o, u) is worth {vowel} points and every other letter {other}.",
        reference_helper=f"def aux({item}):\n    return sum({vowel} if ch in 'aeiou' else {other} for ch in {item})\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


RUNS = [("floors", "floor", "lift"), ("pages", "page", "reader"), ("steps", "step", "climber")]


def longest_run(rng: random.Random, level: int) -> Draft:
    """aux says whether a value continues a run; main counts, measures or locates runs."""
    items, item, who = pick(rng, RUNS)
    step = rng.randint(1, 3)
    shortest, longest = sizes(level)

    def walk() -> list[int]:
        values = int_list(rng, 1, 0, 9) if rng.randint(shortest, longest) else []
        while values and len(values) < rng.randint(shortest, longest + 3):
            values.append(values[-1] + step if rng.random() < 0.6 else rng.randint(0, 20))
        return values

    inputs = [(walk(),) for _ in range(10)]
    runs = f"the {who}'s {items} continue a run when each is the one before plus {step}"
    if level == 1:
        name = f"count_{item}_continuations"
        summary = f"Return how many of the {items} (after the first) equal the {item} just before them plus {step}."
        main = f"    return sum(1 for a, b in zip({items}, {items}[1:]) if aux(a, b))\n"
    elif level == 2:
        name = f"longest_{item}_run"
        summary = f"Say {runs}. Return the length of the longest run (a single {item} is a run of 1; 0 when empty)."
        main = (f"    best = run = 1 if {items} else 0\n    for a, b in zip({items}, {items}[1:]):\n"
                "        run = run + 1 if aux(a, b) else 1\n        best = max(best, run)\n    return best\n")
    else:
        name = f"longest_{item}_run_start"
        summary = (f"Say {runs}; a single {item} is a run of 1. Return the first {item} of the longest run (the "
                   f"earliest on ties), or None when {items} is empty.")
        main = (f"    best, start, run = 0, None, 0\n    for i, x in enumerate({items}):\n"
                f"        run = run + 1 if i and aux({items}[i - 1], x) else 1\n"
                f"        if run > best:\n            best, start = run, {items}[i - run + 1]\n    return start\n")
    return Draft(
        entry_point=name, params=items, summary=summary,
        helper_signature="def aux(previous, current):", helper_doc=f"Return True when current equals previous plus {step}.",
        reference_helper=f"def aux(previous, current):\n    return current == previous + {step}\n",
        reference_main=f"def {name}({items}):\n{main}", inputs=inputs, public_count=2,
    )


ACCOUNTS = [("cards", "card"), ("accounts", "account"), ("phones", "phone"), ("lockers", "locker")]


def mask_codes(rng: random.Random, level: int) -> Draft:
    """aux hides all but the last characters of a code; main maps, joins or filters masked codes."""
    items, item = pick(rng, ACCOUNTS)
    keep = rng.randint(1, 3)
    shortest, longest = sizes(level)
    pool = [str(rng.randint(10, 99999)) for _ in range(5)]
    code = (lambda: pick(rng, pool)) if level == 3 else (lambda: str(rng.randint(1, 999999)))
    inputs = [([code() for _ in range(rng.randint(shortest, longest))],) for _ in range(10)]
    masked = f"masked (every character but the last {keep} replaced by '*')"
    if level == 1:
        name, params = f"mask_{items}", items
        summary = f"Return every {item} number in {items} {masked}, in order."
        main = f"    return [aux(c) for c in {items}]\n"
    elif level == 2:
        name, params = f"masked_{item}_line", items
        summary = f"Return one string of the {item} numbers in {items}, each {masked}, joined by ', '."
        main = f"    return ', '.join(aux(c) for c in {items})\n"
    else:
        name, params = f"distinct_masked_{items}", items
        summary = (f"Return the {item} numbers of {items} longer than {keep} characters, each {masked}, "
                   "without repeats, in the order they first appear.")
        main = f"    return list(dict.fromkeys(aux(c) for c in {items} if len(c) > {keep}))\n"
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature="def aux(code):", helper_doc=f"Return code with every character but the last {keep} replaced by '*'.",
        reference_helper=f"def aux(code):\n    return '*' * max(len(code) - {keep}, 0) + code[-{keep}:]\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


CATEGORIES = [("fruit", "veg", "grain", "dairy"), ("gold", "silver", "bronze", "iron"),
              ("red", "blue", "green", "white")]
LOADS = ["cart", "haul", "crate", "shipment", "catch"]


def category_weights(rng: random.Random, level: int) -> Draft:
    """aux looks up a category's weight in a table only the helper sees; main weighs entries."""
    names, load = list(pick(rng, CATEGORIES)), pick(rng, LOADS)
    weights = {name: rng.randint(1, 6) for name in names[:3]}
    shortest, longest = sizes(level)
    inputs = [([[pick(rng, names), rng.randint(1, 9)] for _ in range(rng.randint(shortest, longest))],)
              for _ in range(10)]
    weight = "the category's weight (what aux returns)"
    if level == 1:
        name = f"weighted_{load}_total"
        summary = f"Each entry is a [category, amount] pair. Return the sum of amount times {weight} over all entries."
        main = "    return sum(aux(c) * a for c, a in entries)\n"
    elif level == 2:
        name = f"{load}_weight_by_category"
        summary = f"Each entry is a [category, amount] pair. Return a dict from each category to the sum of amount times {weight} over its entries."
        main = ("    totals = {}\n    for c, a in entries:\n        totals[c] = totals.get(c, 0) + aux(c) * a\n"
                "    return totals\n")
    else:
        name = f"heaviest_{load}_category"
        summary = (f"Each entry is a [category, amount] pair, weighing amount times {weight}. Return the category whose "
                   "entries weigh the most in total (the first seen on ties), or None when there are no entries.")
        main = ("    totals = {}\n    for c, a in entries:\n        totals[c] = totals.get(c, 0) + aux(c) * a\n"
                "    return max(totals, key=totals.get) if totals else None\n")
    table = ", ".join(f"{key!r} weighs {value}" for key, value in weights.items())
    return Draft(
        entry_point=name, params="entries", summary=summary,
        helper_signature="def aux(category):", helper_doc="Return the weight of category in the weight table.",
        helper_fact=f"The weight table: {table}; any other category weighs 0.",
        reference_helper=f"def aux(category):\n    return {weights!r}.get(category, 0)\n",
        reference_main=f"def {name}(entries):\n{main}", inputs=inputs, public_count=2,
    )
