"""Training families whose rule lives with the helper only: a fee table, a validity rule,
label thresholds, an exchange rate. Main is told what ``aux`` returns, not how."""

from __future__ import annotations

import random

from llm_coop_envs.coding.procedural.draft import Draft, int_list, pick, sizes

LETTERS = "ABCDEFGH"
VENUES = [("tickets", "ticket", "theatre"), ("passes", "pass", "ferry"), ("permits", "permit", "harbour office"),
          ("vouchers", "voucher", "museum")]


def ticket_code(rng: random.Random, letters: str) -> str:
    return pick(rng, letters) + str(rng.randint(1, 40))


def code_fees(rng: random.Random, level: int) -> Draft:
    """aux looks a code's fee up in a table only the helper sees; main totals, filters or groups fees."""
    items, item, venue = pick(rng, VENUES)
    if level == 1:
        return _fees_level_one(rng, items, item, venue)
    letters = "".join(rng.sample(LETTERS, 3))
    fees = {letter: rng.randint(2, 15) for letter in letters}
    other = rng.randint(0, 3)
    shortest, longest = sizes(level)
    seen = letters + pick(rng, [c for c in LETTERS if c not in letters])
    inputs = [([ticket_code(rng, seen) for _ in range(rng.randint(shortest, longest))],) for _ in range(10)]
    fee = f"the fee of a {item} code under the {venue}'s fee table (what aux returns)"
    if level == 2:
        name, params = f"fees_of_late_{items}", f"{items}, cutoff"
        summary = (f"Each of the {items} is a code like 'A12': a letter, then a number. Return the list of {fee}, "
                   f"for the {items} whose number is at least cutoff, in order.")
        main = f"    return [aux(c) for c in {items} if int(c[1:]) >= cutoff]\n"
        inputs = [(xs, rng.randint(5, 35)) for (xs,) in inputs]
    else:
        name, params = f"fees_by_letter_{items}", items
        summary = (f"Each of the {items} is a code like 'A12'. Return a dict from each first letter that occurs to "
                   f"the total of {fee} over the {items} with that letter.")
        main = (f"    totals = {{}}\n    for c in {items}:\n        totals[c[0]] = totals.get(c[0], 0) + aux(c)\n"
                "    return totals\n")
    table = ", ".join(f"{letter} costs {value}" for letter, value in fees.items())
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature="def aux(code):", helper_doc=f"Return the fee of the {item} code under the {venue}'s fee table.",
        helper_fact=f"The {venue}'s fee table, by the code's first letter: {table}; any other letter costs {other}.",
        reference_helper=f"def aux(code):\n    return {fees!r}.get(code[0], {other})\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


def _fees_level_one(rng: random.Random, items: str, item: str, venue: str) -> Draft:
    """Level 1: one daily fee, stated in main's prompt; main lists the fee of every stay."""
    fee = rng.randint(2, 9)
    name = f"{item}_fees"
    summary = f"A {item} costs {fee} per day. Return a new list with the fee of every stay: days * {fee}."
    return Draft(
        entry_point=name, params="stays", summary=summary,
        helper_signature="def aux(days):", helper_doc=f"Return days times {fee}.",
        reference_helper=f"def aux(days):\n    return days * {fee}\n",
        reference_main=f"def {name}(stays):\n    return [aux(d) for d in stays]\n",
        inputs=[(int_list(rng, rng.randint(*sizes(1)), 0, 10),) for _ in range(10)], public_count=1,
    )


def valid_codes(rng: random.Random, level: int) -> Draft:
    """aux checks a code against a rule only the helper sees; main counts, keeps or tallies codes."""
    items, item, venue = pick(rng, VENUES)
    if level == 1:
        return _valid_codes_level_one(rng, items, item)
    if rng.random() < 0.5:
        letter, length = pick(rng, LETTERS), rng.randint(3, 4)
        rule = f"a {item} code is valid when it starts with {letter!r} and has exactly {length} characters"
        check = f"code.startswith({letter!r}) and len(code) == {length}"
        letters = letter + pick(rng, [c for c in LETTERS if c != letter])
    else:
        divisor = rng.randint(2, 4)
        rule = f"a {item} code is valid when the sum of its digits is divisible by {divisor}"
        check = f"sum(int(c) for c in code if c.isdigit()) % {divisor} == 0"
        letters = "".join(rng.sample(LETTERS, 2))
    shortest, longest = sizes(level)
    code = lambda: pick(rng, letters) + str(rng.randint(1, 999))  # noqa: E731 -- lengths 2 to 4 vary validity
    inputs = [([code() for _ in range(rng.randint(shortest, longest))],) for _ in range(10)]
    valid = f"valid under the {venue}'s rule (aux tells)"
    if level == 2:
        name = f"keep_valid_{items}"
        summary = f"Return the {items} (codes like 'A12') that are {valid}, in their original order."
        main = f"    return [c for c in {items} if aux(c)]\n"
    else:
        name = f"tally_{items}"
        summary = (f"Return a dict {{'valid': v, 'invalid': n}} counting the {items} (codes like 'A12') that are "
                   f"{valid}, and the others; repeated codes count each time.")
        main = (f"    valid = sum(1 for c in {items} if aux(c))\n"
                f"    return {{'valid': valid, 'invalid': len({items}) - valid}}\n")
    return Draft(
        entry_point=name, params=items, summary=summary,
        helper_signature="def aux(code):", helper_doc=f"Return True when the {item} code is valid under the {venue}'s rule, else False.",
        helper_fact=f"The {venue}'s rule: {rule}.",
        reference_helper=f"def aux(code):\n    return {check}\n",
        reference_main=f"def {name}({items}):\n{main}", inputs=inputs, public_count=2,
    )


def _valid_codes_level_one(rng: random.Random, items: str, item: str) -> Draft:
    """Level 1: the rule (one letter) is in main's prompt; main counts the valid codes."""
    letter = pick(rng, LETTERS)
    letters = letter + pick(rng, [c for c in LETTERS if c != letter])
    name = f"count_valid_{items}"
    inputs = [([ticket_code(rng, letters) for _ in range(rng.randint(*sizes(1)))],) for _ in range(10)]
    return Draft(
        entry_point=name, params=items,
        summary=f"Return how many of the {items} start with {letter!r}: code.startswith({letter!r}).",
        helper_signature="def aux(code):", helper_doc=f"Return True when code starts with {letter!r}, else False.",
        reference_helper=f"def aux(code):\n    return code.startswith({letter!r})\n",
        reference_main=f"def {name}({items}):\n    return sum(1 for c in {items} if aux(c))\n", inputs=inputs, public_count=1,
    )


LABELS = [("temperatures", "temperature", ("cold", "mild", "hot")), ("speeds", "speed", ("slow", "steady", "fast")),
          ("prices", "price", ("cheap", "fair", "dear")), ("noises", "noise", ("quiet", "normal", "loud"))]


def level_labels(rng: random.Random, level: int) -> Draft:
    """aux labels a value by cut points only the helper sees; main maps, counts or selects by label."""
    items, item, (low, mid, high) = pick(rng, LABELS)
    if level == 1:
        return _labels_level_one(rng, items, item, low, high)
    first = rng.randint(5, 20)
    second = first + rng.randint(5, 15)
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(shortest, longest), 0, second + 10),) for _ in range(10)]
    label = f"label ({low!r}, {mid!r} or {high!r}, what aux returns)"
    if level == 2:
        name, params = f"count_{item}_labels", items
        summary = f"Return a dict from each {label} that occurs to how many {items} have it."
        main = (f"    counts = {{}}\n    for x in {items}:\n        counts[aux(x)] = counts.get(aux(x), 0) + 1\n"
                "    return counts\n")
    else:
        name, params = f"{high}_{items}", items
        summary = f"Return, sorted from smallest to largest, the {items} whose {label} is {high!r}."
        main = f"    return sorted(x for x in {items} if aux(x) == {high!r})\n"
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=f"Return the label of {item}: {low!r}, {mid!r} or {high!r}.",
        helper_fact=f"The cut points: a {item} below {first} is {low!r}, one of {second} or more is {high!r}, any other is {mid!r}.",
        reference_helper=(f"def aux({item}):\n    if {item} < {first}:\n        return {low!r}\n"
                          f"    return {high!r} if {item} >= {second} else {mid!r}\n"),
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


def _labels_level_one(rng: random.Random, items: str, item: str, low: str, high: str) -> Draft:
    """Level 1: two labels and one cut point, stated in main's prompt."""
    cut = rng.randint(10, 30)
    name = f"label_{items}"
    inputs = [(int_list(rng, rng.randint(*sizes(1)), cut - 10, cut + 10),) for _ in range(10)]
    return Draft(
        entry_point=name, params=items,
        summary=f"Return a new list with the label of every {item}: {high!r} if {item} >= {cut} else {low!r}.",
        helper_signature=f"def aux({item}):", helper_doc=f"Return {high!r} when {item} is at least {cut}, else {low!r}.",
        reference_helper=f"def aux({item}):\n    return {high!r} if {item} >= {cut} else {low!r}\n",
        reference_main=f"def {name}({items}):\n    return [aux(x) for x in {items}]\n", inputs=inputs, public_count=1,
    )


CURRENCIES = [("crowns", "tokens"), ("gems", "coins"), ("shells", "beads"), ("credits", "points")]


def convert_amounts(rng: random.Random, level: int) -> Draft:
    """aux converts with a rate only the helper sees; main totals, filters or picks converted amounts."""
    source, target = pick(rng, CURRENCIES)
    if level == 1:
        return _convert_level_one(rng, source, target)
    rate = pick(rng, [0.5, 0.75, 1.25, 1.5, 2.5, 3.2, 4.0])
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(max(shortest, 1), longest), 1, 60),) for _ in range(10)]
    worth = f"the amount in {target} (what aux returns for an amount in {source})"
    if level == 2:
        name, params = f"large_total_in_{target}", "amounts, minimum"
        summary = (f"Each of amounts is a sum of {source}. Return the total of {worth} over the amounts that are at least "
                   "minimum, rounded to 2 decimals.")
        main = "    return round(sum(aux(a) for a in amounts if a >= minimum), 2)\n"
        inputs = [(xs, rng.randint(1, 60)) for (xs,) in inputs]
    else:
        name, params = f"spread_in_{target}", "amounts"
        summary = (f"Each of amounts is a sum of {source}. Return the largest minus the smallest of {worth}, rounded to 2 "
                   "decimals; 0.0 when amounts is empty.")
        main = ("    values = [aux(a) for a in amounts]\n"
                "    return round(max(values) - min(values), 2) if values else 0.0\n")
        inputs.insert(5, ([],))
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature="def aux(amount):", helper_doc=f"Return amount (in {source}) converted to {target}.",
        helper_fact=f"The exchange rate: one of the {source} is worth {rate} {target}.",
        reference_helper=f"def aux(amount):\n    return amount * {rate}\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, compare="isclose", public_count=2,
    )


def _convert_level_one(rng: random.Random, source: str, target: str) -> Draft:
    """Level 1: a whole-number rate, stated in main's prompt; integers compared exactly."""
    rate = rng.randint(2, 10)
    name = f"to_{target}"
    summary = f"Return a new list with every amount of {source} in {target}: amount * {rate}."
    return Draft(
        entry_point=name, params="amounts", summary=summary,
        helper_signature="def aux(amount):", helper_doc=f"Return amount times {rate}.",
        reference_helper=f"def aux(amount):\n    return amount * {rate}\n",
        reference_main=f"def {name}(amounts):\n    return [aux(a) for a in amounts]\n",
        inputs=[(int_list(rng, rng.randint(*sizes(1)), 1, 60),) for _ in range(10)], public_count=1,
    )
