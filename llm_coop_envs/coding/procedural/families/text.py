"""Training families over words and names: tags, initials."""

from __future__ import annotations

import random

from llm_coop_envs.coding.procedural.draft import Draft, pick, sizes

WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "iris", "jasper", "kelp",
         "lumen", "maple", "nectar", "onyx", "pebble", "quartz", "raven", "saffron", "tundra", "umber",
         "velvet", "willow", "yarrow", "zephyr", "ash", "bay", "cove", "dune", "elm", "fox", "gull", "hive"]
WORD_DOMAINS = [("labels", "label", "storage shelves"), ("words", "word", "puzzle"), ("names", "name", "boat"),
                ("titles", "title", "playlist")]


def word_lists(rng: random.Random, level: int, count: int = 10) -> list[list[str]]:
    shortest, longest = sizes(level)
    # Level 3 repeats words on purpose: "without repeats" must be exercised.
    pool = rng.sample(WORDS, 6) if level == 3 else WORDS
    return [[pick(rng, pool) for _ in range(rng.randint(shortest, longest))] for _ in range(count)]


def tag_words(rng: random.Random, level: int) -> Draft:
    """aux makes a short upper-case tag; main maps, joins, or filters and de-duplicates."""
    items, item, place = pick(rng, WORD_DOMAINS)
    width = rng.randint(2, 4)
    inputs = [(words,) for words in word_lists(rng, level)]
    tag = f"its first {width} letters in upper case"
    if level == 1:  # one string step: upper case, or the first letters
        name = f"{item}_tags"
        if rng.random() < 0.5:
            body, doc = f"{item}.upper()", f"Return {item} in upper case."
            summary = f"Return a new list with every {item} in upper case: {item}.upper()."
        else:
            body, doc = f"{item}[:{width}]", f"Return the first {width} letters of {item}: {item}[:{width}]."
            summary = f"Return a new list with the first {width} letters of every {item}: {item}[:{width}]."
        return Draft(
            entry_point=name, params=items, summary=summary, helper_signature=f"def aux({item}):", helper_doc=doc,
            reference_helper=f"def aux({item}):\n    return {body}\n",
            reference_main=f"def {name}({items}):\n    return [aux(w) for w in {items}]\n", inputs=inputs, public_count=1,
        )
    if level == 2:
        sep = pick(rng, ["-", "/", "+", ":"])
        name, params = f"joined_{item}_tags", items
        summary = f"Return one string of the tags of the {items} for the {place}, joined by {sep!r}; the tag of a {item} is {tag}."
        main = f"    return {sep!r}.join(aux(w) for w in {items})\n"
    else:
        name, params = f"distinct_{item}_tags", f"{items}, min_length"
        summary = (f"The tag of a {item} is {tag}. Return the tags of the {items} that have at least min_length "
                   f"letters, without repeated tags, in the order each tag first appears.")
        main = (f"    tags = [aux(w) for w in {items} if len(w) >= min_length]\n"
                "    return list(dict.fromkeys(tags))\n")
        inputs = [(words, rng.randint(3, 6)) for (words,) in inputs]
    return Draft(
        entry_point=name, params=params, summary=summary,
        helper_signature=f"def aux({item}):", helper_doc=f"Return the first {width} letters of {item} in upper case.",
        reference_helper=f"def aux({item}):\n    return {item}[:{width}].upper()\n",
        reference_main=f"def {name}({params}):\n{main}", inputs=inputs, public_count=2,
    )


FIRST = ["ada", "bram", "cleo", "dov", "esme", "finn", "greta", "hugo", "ines", "jalen", "kira", "lior", "mira", "noor"]
LAST = ["alder", "brook", "crane", "dale", "frost", "glen", "holt", "marsh", "north", "quill", "reed", "stone"]
PEOPLE = [("players", "player"), ("members", "member"), ("guests", "guest"), ("riders", "rider")]


def initials(rng: random.Random, level: int) -> Draft:
    """aux gives a name's initials; main maps, counts or finds shared initials."""
    items, item = pick(rng, PEOPLE)
    shortest, longest = sizes(level)
    first, last = (rng.sample(FIRST, 4), rng.sample(LAST, 3)) if level == 3 else (FIRST, LAST)

    def name() -> str:
        words = [pick(rng, first), pick(rng, last)]
        return " ".join(w.capitalize() if rng.random() < 0.5 else w for w in words)

    if level == 1:  # first names only: the initial is one index
        entry = f"{item}_initials"
        inputs = [([pick(rng, FIRST).capitalize() for _ in range(rng.randint(shortest, longest))],) for _ in range(10)]
        return Draft(
            entry_point=entry, params="names",
            summary="Return a new list with the first letter of every name: name[0].",
            helper_signature="def aux(name):", helper_doc="Return the first letter of name: name[0].",
            reference_helper="def aux(name):\n    return name[0]\n",
            reference_main=f"def {entry}(names):\n    return [aux(n) for n in names]\n", inputs=inputs, public_count=1,
        )
    inputs = [([name() for _ in range(rng.randint(shortest, longest))],) for _ in range(10)]
    if level == 2:
        entry = f"count_{item}_initials"
        summary = (f"Each of the {items} is a full name such as 'ada Brook', whose initials are 'AB' (the first letter "
                   "of each word, upper-cased). Return a dict from each initials string to how many names have it.")
        main = (f"    counts = {{}}\n    for n in {items}:\n        counts[aux(n)] = counts.get(aux(n), 0) + 1\n"
                "    return counts\n")
    else:
        entry = f"shared_{item}_initials"
        summary = (f"Each of the {items} is a full name such as 'ada Brook', whose initials are 'AB' (the first letter "
                   "of each word, upper-cased). Return, sorted, the initials that more than one name has.")
        main = (f"    found = [aux(n) for n in {items}]\n"
                "    return sorted({i for i in found if found.count(i) > 1})\n")
    return Draft(
        entry_point=entry, params=items, summary=summary,
        helper_signature="def aux(full_name):",
        helper_doc="Return the initials of full_name: the first letter of each word, upper-cased, joined together.",
        reference_helper="def aux(full_name):\n    return ''.join(w[0].upper() for w in full_name.split())\n",
        reference_main=f"def {entry}({items}):\n{main}", inputs=inputs, public_count=2,
    )
