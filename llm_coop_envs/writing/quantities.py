"""Quantities in a parsed sentence: the value, what it measures and the word it describes (``-v5``).

"3mA", "three milliamperes" and "0.003 A" are one quantity; "two weeks" and "two months" are not
("two" alone is in both). A value is read from digits or English number words; its unit from the
word after it (or the letters glued to it) through ``pint``, so units compare by dimension and
magnitude. A count of things ("3 galaxies", "$300") measures the thing itself (its lemma). The
quantity's ``anchor`` is the nearest noun or verb it describes ("my sister (24)" → ``sister``): the
same value moved to another slot is a different claim (:mod:`.claims`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re

SMALL_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
"""The number words read as values: zero to nineteen (:data:`SMALL_NUMBERS`) and the tens."""
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1e6, "billion": 1e9, "dozen": 12}
_OTHER = {"half": 0.5, "twice": 2, "double": 2, "triple": 3, "once": 1}
_DIGITS = re.compile(r"[$€£]?(\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)([A-Za-zµΩ°%]*)")
_MONEY = {"$": "dollar", "€": "euro", "£": "pound"}
_SAME_MEASURE = {"%": "percent", "per_cent": "percent", "dollars": "dollar", "usd": "dollar", "eur": "euro"}
# Words pint reads as units that in prose are something else ("in", "a" year, "are" 100 m², ...).
_NOT_UNITS = frozenset("a at in are as it is be pi point line bit byte cup gal ft min mil rad sec tex pt ct percent".split())
_ONE_LETTER_UNITS = frozenset("VAWJNKgms")


@dataclasses.dataclass(frozen=True)
class Quantity:
    value: float
    """The number as written (3 in "3mA")."""
    measure: str
    """What it measures: a pint dimensionality ("[current]"), "percent", or the lemma counted ("galaxy")."""
    magnitude: float
    """The value in base units where pint knows the unit (0.003 for "3mA"), else ``value``."""
    anchor: str
    """The lemma of the noun or verb the quantity describes."""
    text: str
    position: int = -1
    """The index of its first token in the parsed document."""

    def same_amount(self, other: Quantity) -> bool:
        return self.measure == other.measure and math.isclose(self.magnitude, other.magnitude, rel_tol=1e-6)


def word_value(words: list[str]) -> float | None:
    """The value of English number words ("twenty five", "three hundred", "a dozen"), or None."""
    total, current, seen = 0.0, 0.0, False
    for word in (w.lower().strip(",") for w in words):
        if word in SMALL_NUMBERS or word in TENS:
            current += SMALL_NUMBERS.get(word, TENS.get(word, 0))
        elif word in _SCALES:
            current = max(current, 1.0) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0.0
        elif word in _OTHER:
            current += _OTHER[word]
        elif word in ("and", "a", "-"):
            continue
        else:
            return None
        seen = True
    return total + current if seen else None


@functools.lru_cache(maxsize=1)
def _registry():
    import pint  # the claims extra

    return pint.UnitRegistry()


@functools.lru_cache(maxsize=4096)
def unit_of(word: str, glued: bool) -> tuple[str, float] | None:
    """(dimensionality, factor to base units) of a unit word, or None when it is no unit pint knows."""
    if not word or (word.lower() in _NOT_UNITS and word != "A") or (len(word) == 1 and word not in _ONE_LETTER_UNITS):
        return None
    if len(word) == 2 and not glued and word.lower() == word and not word.endswith("s"):
        return None  # "km" after a space is a unit, but two lower-case letters are often a word ("or", "to")
    try:
        quantity = (1 * _registry().parse_units(word)).to_base_units()
    except Exception:  # pint raises several kinds for text that is no unit
        return None
    dimension = str(quantity.dimensionality)
    return (dimension if dimension != "dimensionless" else f"[{word.lower()}]"), float(quantity.magnitude)


def quantities(sentence) -> list[Quantity]:
    """The quantities of one parsed sentence (a spaCy span), left to right; never raises."""
    found, tokens, k = [], list(sentence), 0
    while k < len(tokens):
        end, value, glued = _number_at(tokens, k)
        if value is None:
            k += 1
            continue
        after = end + 1 if end + 1 < len(tokens) and tokens[end].text == "-" else end  # "20-year-old"
        unit_token = tokens[after] if after < len(tokens) and not glued else None
        if unit_token is not None and unit_token.pos_ == "ADJ" and tokens[k].dep_ == "nummod" and tokens[k].head.i > unit_token.i:
            unit_token = tokens[k].head  # "two minor accidents" counts accidents
        found.append(_build(tokens[k], tokens[end - 1], value, glued, unit_token))
        k = end
    return found


def _number_at(tokens, k: int) -> tuple[int, float | None, str]:
    """(index after the number, its value, letters glued to it) of a number starting at token k."""
    token = tokens[k]
    match = _DIGITS.fullmatch(token.text)
    if match:
        glued = match[2] or _MONEY.get(token.text[0], "")
        return k + 1, float(match[1].replace(",", "")), glued
    if token.lower_ in _MONEY and k + 1 < len(tokens) and _DIGITS.fullmatch(tokens[k + 1].text):
        return k + 2, float(tokens[k + 1].text.replace(",", "")), _MONEY[token.lower_]
    if token.lower_ in _OTHER:
        return k + 1, float(_OTHER[token.lower_]), ""
    if not token.like_num or (token.lower_ == "one" and token.dep_ != "nummod"):
        return k + 1, None, ""  # "one" alone is a pronoun ("the one I liked")
    end = k + 1
    while end < len(tokens) and (tokens[end].like_num or tokens[end].lower_ in _SCALES or tokens[end].text == "-"):
        end += 1
    return end, word_value([t.text for t in tokens[k:end]]), ""


def _build(first, last, value: float, glued: str, unit_token) -> Quantity:
    text = first.doc[first.i: last.i + 1].text
    unit = unit_of(glued, True) if glued and glued not in _MONEY.values() else None
    measure, magnitude = (unit[0], value * unit[1]) if unit else (glued.lower(), value)
    if glued in _MONEY.values():
        measure = glued
    elif not glued and unit_token is not None and (unit_token.pos_ in ("NOUN", "PROPN", "SYM", "X") or (
            first.text[:1].isdigit() and unit_of(unit_token.text, False))):
        # After digits a unit symbol may be tagged as anything ("1 A" as an article).
        unit = unit_of(unit_token.text, False)
        measure, magnitude = (unit[0], value * unit[1]) if unit else (unit_token.lemma_.lower(), value)
        text = f"{text} {unit_token.text}"
    return Quantity(value, _SAME_MEASURE.get(measure, measure), magnitude, _anchor(first, unit_token), text, first.i)


def _anchor(token, unit_token) -> str:
    """The lemma of the first noun, pronoun or verb above the number that is not its unit."""
    node, steps = token.head, 0
    unit_at = unit_token.i if unit_token is not None else -1
    while steps < 6 and (node.i == unit_at or node.pos_ not in ("NOUN", "PROPN", "PRON", "VERB")) and node.head is not node:
        node, steps = node.head, steps + 1
    lemma = node.lemma_.lower()
    return "" if lemma in ("be", "have", "do") else lemma  # "it has been ten weeks": no word to anchor to
