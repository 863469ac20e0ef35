"""Untrusted text as data: what a program prints or raises, made safe to log, encode and show."""

from __future__ import annotations

import re

# Replaced by U+FFFD, so that a program's text can neither fake a line nor reorder one, nor be
# unencodable (docs/sandbox.md lists them):
# - every C0 control but tab and newline (carriage return too: alone it rewrites a line on a
#   terminal; "\r\n" becomes "\n" first), DEL, and every C1 control (U+0080-U+009F: U+0085 is a
#   line break, U+009B a terminal escape);
# - the line and paragraph separators U+2028, U+2029;
# - the bidirectional marks, embeddings, overrides and isolates: U+061C, U+200E, U+200F,
#   U+202A-U+202E, U+2066-U+2069;
# - surrogates, which a Python str may hold alone but UTF-8 cannot encode.
# What is left splits into lines only at "\n" (str.splitlines agrees) and shows in logical order.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def safe_text(text: str, limit: int) -> str:
    """At most `limit` characters of `text` (and a marker saying how many were dropped), as valid
    UTF-8 with only "\\n" to end a line: the characters listed above become U+FFFD."""
    dropped = len(text) - limit
    if dropped > 0:
        text = text[:limit]
    text = _UNSAFE.sub(_REPLACEMENT, text.replace("\r\n", "\n"))
    return text + f"\n[... {dropped} characters dropped]" if dropped > 0 else text
