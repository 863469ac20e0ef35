"""Untrusted text as data: what a program prints or raises, made safe to log, encode and show."""

from __future__ import annotations

import re

# C0 controls but tab, newline and carriage return, DEL (terminal escapes, NULs and the like), and
# surrogates, which a Python str may hold alone but UTF-8 cannot encode.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def safe_text(text: str, limit: int) -> str:
    """At most `limit` characters of `text` (and a marker saying how many were dropped), as valid
    UTF-8: lone surrogates and control characters become U+FFFD."""
    dropped = len(text) - limit
    if dropped > 0:
        text = text[:limit]
    text = _UNSAFE.sub(_REPLACEMENT, text)
    return text + f"\n[... {dropped} characters dropped]" if dropped > 0 else text
