"""Training families over lists of numbers: scores, orders, sensor readings, ticket numbers."""

from __future__ import annotations

import random

from llm_coop_envs.coding.procedural.draft import Draft, int_list, pick, sizes

SCORE_DOMAINS = [("scores", "score", "league"), ("points", "point", "club"), ("laps", "lap", "race office"),
                 ("votes", "vote", "jury"), ("rolls", "roll", "game master"), ("stars", "star", "review board")]


def bonus_scores(rng: random.Random, level: int) -> Draft:
    """aux applies a bonus rule only the helper is told; main adjusts, filters or picks with it."""
    items, item, owner = pick(rng, SCORE_DOMAINS)
    if level == 1:
        return _bonus_scores_level_one(rng, items, item)
    factor, bonus = rng.randint(2, 5), rng.randint(1, 9)
    low, high = (-10, 30) if level == 3 else (0, 20)
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(shortest, longest), low, high),) for _ in range(10)]
    meaning = f"the adjusted value of a {item} under the {owner}'s bonus rule (what aux returns)"
    if level == 2:
        name, params = f"bonus_total_{items}", f"{items}, minimum"
        summary = f"Return the sum of {meaning} over the {items} that are at least minimum."
        main = f"    return sum(aux(x) for x in {items} if x >= minimum)\n"
        inputs = [(xs, rng.randint(low, high)) for (xs,) in inputs]
    else:
        name, params = f"best_even_{item}", items
        summary = (f"Return the largest adjusted value among the even {items}, where the adjusted value is "
                   f"{meaning}; return None when no {item} is even.")
        main = (f"    adjusted = [aux(x) for x in {items} if x % 2 == 0]\n"
                "    return max(adjusted) if adjusted else None\n")
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature=f"def aux({item}):",
        helper_doc=f"Return the adjusted value of {item} under the {owner}'s bonus rule.",
        helper_fact=f"The {owner}'s bonus rule: the adjusted value of a {item} is {item} * {factor} + {bonus}.",
        reference_helper=f"def aux({item}):\n    return {item} * {factor} + {bonus}\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


def _bonus_scores_level_one(rng: random.Random, items: str, item: str) -> Draft:
    """Level 1: one bonus step stated in main's prompt (no helper-only rule)."""
    if rng.random() < 0.5:
        step = rng.randint(2, 20)
        body, rule, doc = f"{item} + {step}", f"has {step} added to it: {item} + {step}", f"Return {item} plus {step}."
    else:
        step = rng.randint(2, 5)
        body, rule, doc = f"{item} * {step}", f"is multiplied by {step}: {item} * {step}", f"Return {item} times {step}."
    name = f"{pick(rng, ['adjust', 'boost', 'rescore'])}_{items}"
    inputs = [(int_list(rng, rng.randint(*sizes(1)), 0, 20),) for _ in range(10)]
    return Draft(
        entry_point=name, params=items, summary=f"Return a new list where every {item} {rule}.",
        helper_signature=f"def aux({item}):", helper_doc=doc,
        reference_helper=f"def aux({item}):\n    return {body}\n",
        reference_main=f"def {name}({items}):\n    return [aux(x) for x in {items}]\n", inputs=inputs, public_count=1,
    )


ORDER_DOMAINS = [("orders", "price", "count", "stock order"), ("baskets", "cost", "units", "basket"),
                 ("bookings", "fare", "seats", "booking"), ("deliveries", "rate", "crates", "delivery")]


def order_totals(rng: random.Random, level: int) -> Draft:
    """aux prices one order (with a bulk discount at level 3); main totals or counts orders."""
    orders, price, count, order = pick(rng, ORDER_DOMAINS)
    if level == 1:
        return _order_totals_level_one(rng, orders, order)
    shortest, longest = sizes(level)
    inputs = [([[rng.randint(1, 20), rng.randint(0, 12)] for _ in range(rng.randint(shortest, longest))],)
              for _ in range(10)]
    body, doc = f"{price} * {count}", f"Return the cost of one {order}: {price} times {count}."
    if level == 2:
        name, params = f"affordable_{orders}", f"{orders}, budget"
        summary = f"Each {order} in {orders} is a [{price}, {count}] pair costing {price} times {count}. Return how many {orders} cost at most budget."
        main = f"    return sum(1 for p, c in {orders} if aux(p, c) <= budget)\n"
        inputs = [(xs, rng.randint(5, 120)) for (xs,) in inputs]
    else:
        bulk, discount = rng.randint(4, 8), rng.randint(2, 9)
        body = f"{price} * {count} - ({discount} if {count} >= {bulk} else 0)"
        doc = f"Return the cost of one {order}: {price} times {count}, less {discount} when {count} is at least {bulk}."
        name, params = f"discounted_{orders}_total", orders
        summary = (f"Each {order} in {orders} is a [{price}, {count}] pair. One {order} costs {price} times {count}, "
                   f"less {discount} when {count} is at least {bulk}. Return the total cost of the {orders} whose {count} is not zero.")
        main = f"    return sum(aux(p, c) for p, c in {orders} if c != 0)\n"
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature=f"def aux({price}, {count}):", helper_doc=doc,
        reference_helper=f"def aux({price}, {count}):\n    return {body}\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


def _order_totals_level_one(rng: random.Random, orders: str, order: str) -> Draft:
    """Level 1: a flat list of unit counts at one stated unit price; main totals them."""
    price = rng.randint(2, 9)
    name = f"total_cost_of_{orders}"
    summary = f"One unit costs {price}. Return the total cost: the sum of count * {price} over counts."
    inputs = [(int_list(rng, rng.randint(*sizes(1)), 0, 12),) for _ in range(10)]
    return Draft(
        entry_point=name, params="counts", summary=summary,
        helper_signature="def aux(count):", helper_doc=f"Return count times {price}.",
        reference_helper=f"def aux(count):\n    return count * {price}\n",
        reference_main=f"def {name}(counts):\n    return sum(aux(c) for c in counts)\n", inputs=inputs, public_count=1,
    )


SENSOR_DOMAINS = [("readings", "reading", "thermometer"), ("levels", "level", "water gauge"),
                  ("samples", "sample", "light meter"), ("pressures", "pressure", "tyre sensor")]


def clamp_readings(rng: random.Random, level: int) -> Draft:
    """aux clamps one reading into a stated range; main maps, sums or counts changes."""
    items, item, device = pick(rng, SENSOR_DOMAINS)
    low = rng.randint(-5, 10)
    high = low + rng.randint(5, 20)
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(shortest, longest), low - 10, high + 10),) for _ in range(10)]
    rule = f"{item} clamped into the range {low} to {high} (below {low} becomes {low}, above {high} becomes {high})"
    body, doc = f"min(max({item}, {low}), {high})", f"Return {item} clamped into the range {low} to {high}."
    if level == 1:  # one bound only, stated in main's prompt
        name = f"clamp_{items}"
        if rng.random() < 0.5:
            body, doc = f"min({item}, {high})", f"Return {item}, or {high} when {item} is above {high}."
            summary = f"Return a new list with min({item}, {high}) for every {item} (above {high} becomes {high})."
        else:
            body, doc = f"max({item}, {low})", f"Return {item}, or {low} when {item} is below {low}."
            summary = f"Return a new list with max({item}, {low}) for every {item} (below {low} becomes {low})."
        main = f"    return [aux(x) for x in {items}]\n"
    elif level == 2:
        name = f"clamped_{item}_sum"
        summary = f"The {device} gives {items}. Return the sum of the {items} after each is {rule.split(' ', 1)[1]}."
        main = f"    return sum(aux(x) for x in {items})\n"
    else:
        name = f"clamped_{item}_changes"
        summary = (f"The {device} gives {items}. Clamp each {item} into the range {low} to {high}, then return how many "
                   f"clamped {items} differ from the clamped {item} just before them.")
        main = (f"    values = [aux(x) for x in {items}]\n"
                "    return sum(1 for a, b in zip(values, values[1:]) if a != b)\n")
    return Draft(
        entry_point=name, params=items, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=doc,
        reference_helper=f"def aux({item}):\n    return {body}\n",
        reference_main=f"def {name}({items}):\n{main}", inputs=inputs, public_count=1 if level == 1 else 2,
    )


def neighbour_gaps(rng: random.Random, level: int) -> Draft:
    """aux compares two neighbouring readings; main lists, maximises or locates the steps."""
    items, item, device = pick(rng, SENSOR_DOMAINS)
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(shortest, longest), 0, 40),) for _ in range(10)]
    if level == 1:
        return _gaps_level_one(rng, items, item, device, inputs)
    body, doc = "abs(after - before)", "Return the size of the step from before to after: abs(after - before)."
    if level == 2:
        name, params = f"largest_{item}_gap", items
        summary = f"Return the largest gap abs(next - previous) between neighbouring {items} of the {device}, or 0 when there are fewer than two."
        main = f"    return max((aux(a, b) for a, b in zip({items}, {items}[1:])), default=0)\n"
    else:
        name, params = f"steep_{item}_rises", f"{items}, limit"
        body, doc = "after - before if after > before else 0", "Return how much after rises above before, or 0 when it does not rise."
        summary = (f"Return the positions i (counting from 1) where {items}[i] rises above {items}[i - 1] "
                   f"by more than limit, in increasing order.")
        main = f"    return [i for i in range(1, len({items})) if aux({items}[i - 1], {items}[i]) > limit]\n"
        inputs = [(xs, rng.randint(0, 10)) for (xs,) in inputs]
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature="def aux(before, after):", helper_doc=doc,
        reference_helper=f"def aux(before, after):\n    return {body}\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


def _gaps_level_one(rng: random.Random, items: str, item: str, device: str, inputs: list) -> Draft:
    """Level 1: the gap of every reading to one stated target value."""
    target = rng.randint(10, 30)
    name = f"{item}_gaps"
    summary = f"Return a new list with the gap of every {item} to {target}: abs({item} - {target})."
    return Draft(
        entry_point=name, params=items, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=f"Return abs({item} - {target}).",
        reference_helper=f"def aux({item}):\n    return abs({item} - {target})\n",
        reference_main=f"def {name}({items}):\n    return [aux(x) for x in {items}]\n", inputs=inputs, public_count=1,
    )


NUMBER_DOMAINS = [("tickets", "ticket"), ("receipts", "receipt"), ("serials", "serial"), ("badges", "badge")]


def digit_sums(rng: random.Random, level: int) -> Draft:
    """aux sums a number's digits; main maps, counts by divisibility, or picks the top number."""
    items, item = pick(rng, NUMBER_DOMAINS)
    shortest, longest = sizes(level)
    top = {1: 99, 2: 999}.get(level, 99999)
    inputs = [(int_list(rng, rng.randint(shortest, longest), 0, top),) for _ in range(10)]
    if level == 1:  # one digit, one operator
        name = f"last_digits_of_{items}"
        return Draft(
            entry_point=name, params=items,
            summary=f"Return a new list with the last digit of every {item}: {item} % 10.",
            helper_signature=f"def aux({item}):", helper_doc=f"Return the last digit of {item}: {item} % 10.",
            reference_helper=f"def aux({item}):\n    return {item} % 10\n",
            reference_main=f"def {name}({items}):\n    return [aux(n) for n in {items}]\n", inputs=inputs, public_count=1,
        )
    if level == 2:
        name, params = f"count_lucky_{items}", f"{items}, divisor"
        summary = f"A {item} number is lucky when the sum of its digits is divisible by divisor. Return how many of the {items} are lucky."
        main = f"    return sum(1 for n in {items} if aux(n) % divisor == 0)\n"
        inputs = [(xs, rng.randint(2, 5)) for (xs,) in inputs]
    else:
        name, params = f"heaviest_{item}", items
        summary = (f"Return the {item} number with the largest sum of digits (the first one on ties), "
                   f"or None when there are no {items}.")
        main = f"    return max({items}, key=aux) if {items} else None\n"
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature="def aux(number):", helper_doc="Return the sum of the decimal digits of number (number >= 0).",
        reference_helper="def aux(number):\n    return sum(int(d) for d in str(number))\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


TIME_DOMAINS = [("minutes", "minute", "arrival"), ("ages", "age", "visitor"), ("heights", "height", "plant"),
                ("weights", "weight", "parcel")]


def bucket_counts(rng: random.Random, level: int) -> Draft:
    """aux rounds a value down to its bucket; main lists, counts per bucket, or finds the busiest."""
    items, item, thing = pick(rng, TIME_DOMAINS)
    width = pick(rng, [5, 10, 15, 20, 25])
    shortest, longest = sizes(level)
    inputs = [(int_list(rng, rng.randint(shortest, longest), 0, width * 6),) for _ in range(10)]
    counting = ("    counts = {}\n    for x in " + items + ":\n        key = aux(x)\n"
                "        counts[key] = counts.get(key, 0) + 1\n")
    if level == 1:  # the bucket's number, not its lower bound
        name = f"{item}_buckets"
        return Draft(
            entry_point=name, params=items,
            summary=f"Return a new list with the bucket of every {item}: {item} // {width}.",
            helper_signature=f"def aux({item}):", helper_doc=f"Return {item} // {width}.",
            reference_helper=f"def aux({item}):\n    return {item} // {width}\n",
            reference_main=f"def {name}({items}):\n    return [aux(x) for x in {items}]\n", inputs=inputs, public_count=1,
        )
    if level == 2:
        name = f"count_{item}_buckets"
        summary = (f"Round each {thing}'s {item} in {items} down to a multiple of {width} (its bucket). "
                   f"Return a dict from each bucket to how many {items} fall in it.")
        main = counting + "    return counts\n"
    else:
        name = f"busiest_{item}_bucket"
        summary = (f"Round each {thing}'s {item} in {items} down to a multiple of {width} (its bucket). Return the bucket "
                   f"holding the most {items} (the smallest bucket on ties), or None when {items} is empty.")
        main = counting + "    return min(counts, key=lambda k: (-counts[k], k)) if counts else None\n"
    return Draft(
        entry_point=name, params=items, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=f"Return {item} rounded down to a multiple of {width}.",
        reference_helper=f"def aux({item}):\n    return {item} // {width} * {width}\n",
        reference_main=f"def {name}({items}):\n{main}", inputs=inputs, public_count=2,
    )
