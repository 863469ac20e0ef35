"""The cooperative level (``coop_procedural-v2`` level 4): the pair can only solve it together.

Each family's level 1 is one step over a flat list, stated in main's prompt. At the cooperative level
the step's fact (a constant, a rule, a small table) is told to the helper only; main's prompt says
what ``aux`` returns and writes ``aux(x)`` into the stated expression (main copies stated expressions,
so the call is within its reach), and the helper's prompt holds ``aux``'s contract and the fact.
Every fact takes at least 10 values, drawn uniformly so that none comes up more than one draw in ten,
and none is a value the judge's stand-ins return (0, 1, True, False, '', None, []). The public example
may not give the fact away (the v1 draw checks ask it to leave three alternatives); each draw proposes
the empty list among its inputs, an example that shows only the form of the answer.

The training families state their fact in words ("every roll gets 12 extra points"): written with its
Python expression as well, the default model's helper copied it and the untrained pair passed 39.6 % of
48 greedy training problems, above the 10-30 % the level is calibrated to (in words 29-31 %). The
held-out families keep the expression (``sum(3 if ch in 'aeiou' else 5 for ch in word)``): their
shapes are new, and in words the untrained helper solved none of 48 training-stream draws of them
(with the expression the untrained pair passes 12.5 % of those draws).
The calibration: ``benchmarks/results/coop_procedural_v2_calibration.md``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from llm_coop_envs.coding.procedural.draft import Draft, pick
from llm_coop_envs.coding.procedural.families.numbers import SCORE_DOMAINS
from llm_coop_envs.coding.procedural.families.tables import CURRENCIES, LABELS, LETTERS, VENUES
from llm_coop_envs.coding.procedural.families.text import WORDS

SHORTEST, LONGEST = 2, 5
MARKS = [".", "#", "*", "!", "~", "+", "=", "@", "&", "%", "^", "?"]
CODES = ["QX", "ZA", "KT", "MB", "RV", "JL", "WO", "PD", "HN", "YF", "GS", "UC", "XE", "TI", "BR", "NK"]
VERBS = ["get", "make", "list", "compute", "find", "build", "give", "collect"]
"""Main's prompt holds no fact, so its wording varies by name alone: a verb before each entry point gives
every family enough distinct prompts for both sides of the train/test split (split by the prompt's hash)."""
SHAPES = {
    # how main combines aux's results: (the stated expression, main's reference body)
    "list": ("[aux({x}) for {x} in {xs}]", "return [aux(x) for x in {xs}]"),
    "sum": ("sum(aux({x}) for {x} in {xs})", "return sum(aux(x) for x in {xs})"),
    "keep": ("[{x} for {x} in {xs} if aux({x})]", "return [x for x in {xs} if aux(x)]"),
}


def _lists(rng: random.Random, item: Callable[[], object], count: int = 9) -> list[tuple[list]]:
    """``count`` lists of 2-5 items and the empty list (the example that keeps the fact hidden)."""
    return [([item() for _ in range(rng.randint(SHORTEST, LONGEST))],) for _ in range(count)] + [([],)]


def _draft(*, name: str, xs: str, x: str, what: str, shape: str, doc: str, fact: str, body: str,
           inputs: list, rng: random.Random, params: str = "") -> Draft:
    """A one-comprehension main over ``xs`` that calls ``aux(x)``; ``body``: the reference aux's return
    expression, with the fact in it."""
    stated, main = (part.format(x=x, xs=xs) for part in SHAPES[shape])
    name = f"{pick(rng, VERBS)}_{name}"
    return Draft(
        entry_point=name, params=params or xs, summary=f"Return {what}:\n{stated}",
        helper_signature=f"def aux({x}):", helper_doc=doc, helper_fact=fact,
        reference_helper=f"def aux({x}):\n    return {body}\n",
        reference_main=f"def {name}({params or xs}):\n    {main}\n", inputs=inputs, public_count=1,
    )


def bonus_scores(rng: random.Random) -> Draft:
    items, item, owner = pick(rng, SCORE_DOMAINS)
    step = rng.randint(2, 20)
    return _draft(rng=rng, name=f"{owner.replace(' ', '_')}_{items}", xs=items, x=item, shape="list",
                  what=f"a new list with every {item} after the {owner}'s bonus",
                  doc=f"Return {item} with the {owner}'s bonus added.",
                  fact=f"The {owner}'s bonus: every {item} gets {step} extra points.",
                  body=f"{item} + {step}", inputs=_lists(rng, lambda: rng.randint(0, 40)))


def order_totals(rng: random.Random) -> Draft:
    shop = pick(rng, ["bakery", "hardware store", "print shop", "seed shop"])
    price = rng.randint(2, 20)
    return _draft(rng=rng, name=f"{shop.replace(' ', '_')}_bill", xs="counts", x="count", shape="sum",
                  what=f"the total cost of the counts of units bought at the {shop}",
                  doc=f"Return the cost of count units at the {shop}'s unit price.",
                  fact=f"At the {shop} one unit costs {price}.",
                  body=f"count * {price}", inputs=_lists(rng, lambda: rng.randint(1, 12)))


def clamp_readings(rng: random.Random) -> Draft:
    device = pick(rng, ["thermostat", "pressure gauge", "rain meter", "wind vane"])
    high = rng.randint(12, 30)
    return _draft(rng=rng, name=f"capped_{device.replace(' ', '_')}_readings", xs="readings", x="reading", shape="list",
                  what=f"a new list with every reading capped at the {device}'s limit",
                  doc=f"Return the reading capped at the {device}'s limit.",
                  fact=f"The {device}'s limit is {high}: a reading above {high} becomes {high}; any other reading stays as it is.",
                  body=f"min(reading, {high})", inputs=_lists(rng, lambda: rng.randint(0, 40)))


def neighbour_gaps(rng: random.Random) -> Draft:
    device = pick(rng, ["kiln", "boiler", "fridge", "aquarium"])
    target = rng.randint(10, 40)
    return _draft(rng=rng, name=f"{device}_target_gaps", xs="readings", x="reading", shape="list",
                  what=f"a new list with the gap of every reading to the {device}'s target",
                  doc=f"Return the gap between the reading and the {device}'s target.",
                  fact=f"The {device}'s target is {target}: the gap is how far the reading is from {target}, above or below.",
                  body=f"abs(reading - {target})", inputs=_lists(rng, lambda: rng.randint(0, 50)))


def digit_sums(rng: random.Random) -> Draft:
    kind = pick(rng, ["ticket", "parcel", "locker", "badge"])
    divisor = rng.randint(3, 19)
    return _draft(rng=rng, name=f"{kind}_check_values", xs="numbers", x="number", shape="list",
                  what=f"a new list with the check value of every {kind} number",
                  doc=f"Return the check value of a {kind} number.",
                  fact=f"The check value of a {kind} number is its remainder after division by {divisor}.",
                  body=f"number % {divisor}", inputs=_lists(rng, lambda: rng.randint(20, 999)))


def bucket_counts(rng: random.Random) -> Draft:
    thing = pick(rng, ["parcel", "runner", "tree", "crate"])
    width = rng.randint(2, 16)
    return _draft(rng=rng, name=f"{thing}_buckets", xs="values", x="value", shape="list",
                  what=f"a new list with the bucket of every {thing}'s value",
                  doc=f"Return the bucket of a {thing}'s value.",
                  fact=f"The bucket width is {width}: a value's bucket is how many whole widths fit into it.",
                  body=f"value // {width}", inputs=_lists(rng, lambda: rng.randint(0, 99)))


def tag_words(rng: random.Random) -> Draft:
    place = pick(rng, ["storage shelves", "puzzle club", "boat yard", "playlist"])
    code = pick(rng, CODES)
    return _draft(rng=rng, name=f"{place.split()[0]}_tags", xs="words", x="word", shape="list",
                  what=f"a new list with the tag of every word for the {place}",
                  doc=f"Return the tag of word for the {place}.",
                  fact=f"A tag for the {place} is the word in upper case followed by '-{code}'.",
                  body=f"word.upper() + '-{code}'", inputs=_lists(rng, lambda: pick(rng, WORDS)))


def initials(rng: random.Random) -> Draft:
    club = pick(rng, ["chess club", "choir", "rowing team", "book circle"])
    mark = pick(rng, MARKS)
    return _draft(rng=rng, name=f"{club.split()[0]}_initials", xs="names", x="name", shape="list",
                  what=f"a new list with the {club}'s initial of every name",
                  doc=f"Return the {club}'s initial of name.",
                  fact=f"The {club}'s initial of a name is its first letter followed by {mark!r}.",
                  body=f"name[0] + {mark!r}", inputs=_lists(rng, lambda: pick(rng, WORDS).capitalize()))


def code_fees(rng: random.Random) -> Draft:
    items, item, venue = pick(rng, VENUES)
    letters = "".join(rng.sample(LETTERS, 3))
    fees = {letter: rng.randint(2, 15) for letter in letters}
    other = rng.randint(2, 15)
    seen = letters + pick(rng, [c for c in LETTERS if c not in letters])
    table = ", ".join(f"{letter} costs {value}" for letter, value in fees.items())
    return _draft(rng=rng, name=f"{item}_fees", xs="codes", x="code", shape="list",
                  what=f"a new list with the {venue}'s fee of every {item} code (codes like 'A12')",
                  doc=f"Return the fee of a {item} code under the {venue}'s fee table.",
                  fact=f"The {venue}'s fee table, by the code's first letter: {table}; any other letter costs {other}.",
                  body=f"{fees!r}.get(code[0], {other})",
                  inputs=_lists(rng, lambda: pick(rng, seen) + str(rng.randint(1, 40))))


def valid_codes(rng: random.Random) -> Draft:
    items, item, venue = pick(rng, VENUES)
    letter, length = pick(rng, LETTERS), rng.randint(3, 4)
    letters = letter + pick(rng, [c for c in LETTERS if c != letter])
    return _draft(rng=rng, name=f"valid_{items}", xs="codes", x="code", shape="keep",
                  what=f"the {item} codes (like 'A12') that are valid under the {venue}'s rule, in order",
                  doc=f"Return True when the {item} code is valid under the {venue}'s rule, else False.",
                  fact=f"The {venue}'s rule: a code is valid when it starts with {letter!r} and has exactly "
                       f"{length} characters.",
                  body=f"code.startswith({letter!r}) and len(code) == {length}",
                  inputs=_lists(rng, lambda: pick(rng, letters) + str(rng.randint(1, 999))))


def level_labels(rng: random.Random) -> Draft:
    items, item, (low, _, high) = pick(rng, LABELS)
    cut = rng.randint(10, 30)
    return _draft(rng=rng, name=f"{item}_labels", xs=items, x=item, shape="list",
                  what=f"a new list with the label of every {item}",
                  doc=f"Return the label of {item}: {high!r} or {low!r}.",
                  fact=f"A {item} of {cut} or more is {high!r}; below {cut} it is {low!r}.",
                  body=f"{high!r} if {item} >= {cut} else {low!r}",
                  inputs=_lists(rng, lambda: rng.randint(cut - 10, cut + 10)))


def convert_amounts(rng: random.Random) -> Draft:
    """Whole-number rates (19 of them, where v1's levels 2-3 drew from 7), so sums compare exactly."""
    source, target = pick(rng, CURRENCIES)
    rate = rng.randint(2, 20)
    return _draft(rng=rng, name=f"total_in_{target}", xs="amounts", x="amount", shape="sum",
                  what=f"the total of the amounts of {source}, in {target}",
                  doc=f"Return amount (in {source}) converted to {target}.",
                  fact=f"The exchange rate: one of the {source} is worth {rate} {target}.",
                  body=f"amount * {rate}", inputs=_lists(rng, lambda: rng.randint(1, 60)))


def letter_points(rng: random.Random) -> Draft:
    game = pick(rng, ["spelling game", "wizard duel", "quiz night"])
    vowel, other = rng.sample(range(2, 10), 2)
    return _draft(rng=rng, name=f"{game.split()[0]}_points", xs="words", x="word", shape="list",
                  what=f"a new list with the points of every word in the {game}",
                  doc=f"Return the points word is worth in the {game}.",
                  fact=f"In the {game} each vowel (a, e, i, o, u) is worth {vowel} points and every other letter "
                       f"{other}: sum({vowel} if ch in 'aeiou' else {other} for ch in word).",
                  body=f"sum({vowel} if ch in 'aeiou' else {other} for ch in word)",
                  inputs=_lists(rng, lambda: pick(rng, WORDS)))


def longest_run(rng: random.Random) -> Draft:
    """aux takes two arguments here: main pairs each value with the one before it."""
    step = rng.randint(2, 15)

    def walk() -> list[int]:
        values = [rng.randint(0, 30)]
        for _ in range(rng.randint(2, 5)):
            values.append(values[-1] + step if rng.random() < 0.5 else rng.randint(0, 40))
        return values

    name = f"{pick(rng, VERBS)}_run_steps"
    return Draft(
        entry_point=name, params="values",
        summary="Return, for each value after the first, whether it continues the run from the value before it:\n"
                "[aux(a, b) for a, b in zip(values, values[1:])]",
        helper_signature="def aux(previous, current):",
        helper_doc="Return True when current continues the run from previous, else False.",
        helper_fact=f"A value continues the run when it is exactly {step} more than the previous one: "
                    f"current == previous + {step}.",
        reference_helper=f"def aux(previous, current):\n    return current == previous + {step}\n",
        reference_main=f"def {name}(values):\n    return [aux(a, b) for a, b in zip(values, values[1:])]\n",
        inputs=[(walk(),) for _ in range(9)] + [([],)], public_count=1,
    )


def mask_codes(rng: random.Random) -> Draft:
    mark = pick(rng, MARKS)
    return _draft(rng=rng, name="masked_codes", xs="codes", x="code", shape="list",
                  what="a new list with every code masked",
                  doc="Return code with every character but the last 2 masked.",
                  fact=f"The mask character is {mark!r}: {mark!r} * (len(code) - 2) + code[-2:].",
                  body=f"{mark!r} * (len(code) - 2) + code[-2:]",
                  inputs=_lists(rng, lambda: pick(rng, LETTERS) + str(rng.randint(100, 99999))))


def category_weights(rng: random.Random) -> Draft:
    categories = rng.sample(["fruit", "tools", "books", "toys", "glass", "cloth"], 3)
    weights = {c: rng.randint(2, 15) for c in categories}
    table = ", ".join(f"{c} weighs {w}" for c, w in weights.items())
    return _draft(rng=rng, name="load_weight", xs="entries", x="category", shape="sum",
                  what="the total weight of the entries (category names)",
                  doc="Return the weight of category in the weight table.",
                  fact=f"The weight table: {table}: {weights!r}[category].",
                  body=f"{weights!r}[category]", inputs=_lists(rng, lambda: pick(rng, categories)))


COOPERATIVE: dict[str, Callable[[random.Random], Draft]] = {
    "bonus_scores": bonus_scores, "order_totals": order_totals, "clamp_readings": clamp_readings,
    "neighbour_gaps": neighbour_gaps, "digit_sums": digit_sums, "bucket_counts": bucket_counts,
    "tag_words": tag_words, "initials": initials, "code_fees": code_fees, "valid_codes": valid_codes,
    "level_labels": level_labels, "convert_amounts": convert_amounts,
    "letter_points": letter_points, "longest_run": longest_run, "mask_codes": mask_codes,
    "category_weights": category_weights,
}
"""Family -> its cooperative-level generator (every training and held-out family has one)."""
