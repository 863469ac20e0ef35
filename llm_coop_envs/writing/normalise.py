"""One normal form for every text a ``-v5`` gate, claim check or model reads (the ``claims`` extra).

Two ways a policy slips copied or flipped text past word matching, both invisible to a reader:

- **look-alike letters** (``ɑ`` U+0251, ``ɡ`` U+0261, ``ı`` U+0131, ``ᴏ`` U+1D0F, Cyrillic ``а``, ...):
  :func:`fold` maps every non-ASCII character that Unicode's confusables table (UTS #39, as shipped
  by ``confusable-homoglyphs``) lists as confusable with an ASCII letter or digit to that ASCII text,
  after NFKC. ASCII is left as it is: the table's own skeleton also maps ``m`` to ``rn`` and ``I`` to
  ``l``, which is right for comparing two strings but would garble the text the model reads, and the
  same folded text feeds every gate and the model;
- **invisible characters** (zero-width joiners and spaces, soft hyphens, bidirectional controls, tag
  characters, variation selectors: Unicode's format characters and the other default-ignorable code
  points): :func:`invisible` counts them and :func:`fold` removes them. No honest text needs one, so
  a text that has any fails a gate outright (``-v5``'s ``visible`` gate).
"""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib import resources

# Default-ignorable code points that are not format characters (category Cf), and blank look-alikes
# that render as nothing: the Hangul fillers, the Braille blank, the Khmer inherent vowels.
_IGNORABLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180E, 0x180F, 0x2800, 0x3164, 0xFFA0]
    + list(range(0xFE00, 0xFE10)) + list(range(0xE0100, 0xE01F0))
)


def is_invisible(char: str) -> bool:
    """A character that draws nothing: a format character (Cf) or another default-ignorable one."""
    return unicodedata.category(char) == "Cf" or ord(char) in _IGNORABLE


def invisible(text: str) -> int:
    """How many invisible characters :func:`is_invisible` finds in ``text``."""
    return sum(1 for char in text if is_invisible(char))


@functools.lru_cache(maxsize=1)
def _ascii_prototypes() -> dict[int, str]:
    """Non-ASCII character → the ASCII letters or digits it is confusable with (UTS #39's table)."""
    table = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    mapping = {}
    for char, entries in table.items():
        if len(char) != 1 or char.isascii():
            continue
        # The package stores the table both ways; the ASCII side of an entry is the prototype.
        prototypes = [e["c"] for e in entries if e["c"].isascii() and e["c"].isalnum()]
        if prototypes:
            mapping[ord(char)] = prototypes[0]
    return mapping


def fold(text: str) -> str:
    """``text`` in NFKC, invisible characters removed, look-alike letters mapped to the ASCII they imitate."""
    if not isinstance(text, str):
        return ""
    plain = "".join(char for char in unicodedata.normalize("NFKC", text) if not is_invisible(char))
    if plain.isascii():
        return plain
    return plain.translate(_ascii_prototypes())
