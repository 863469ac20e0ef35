"""A text space that accepts any Unicode string, because model replies contain anything."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Space

# Sampled characters cover ASCII, code punctuation, accents, CJK, emoji and a lone surrogate,
# so random-action tests exercise what real model replies contain.
_SAMPLE_ALPHABET = tuple(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\t()[]{}:;,.=+-*/_'\"#`"
) + ("é", "ß", "中", "文", "🙂", "\u200b", "\x00", "\ud800")


class UnicodeText(Space[str]):
    """Any ``str`` up to ``max_length`` characters (``None``: unbounded).

    Gymnasium's ``Text`` space only admits a fixed alphabet, which rejects most real text.
    """

    def __init__(self, max_length: int | None = None, seed: int | np.random.Generator | None = None):
        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be positive or None, got {max_length}.")
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and (self.max_length is None or len(x) <= self.max_length)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(0, min(self.max_length or 64, 64) + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length
