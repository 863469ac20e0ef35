"""The plain-data codec: the only form in which values cross between the judge and the program.

Exact builtin types only (``type(x) is T``, never a subclass): None, bool, int, float (nan and
inf included), complex, str, bytes, and list, tuple, set, frozenset and dict of those. Anything
else raises NotPlain, and nothing is ever pickled. Caps: nesting depth, number of items, total
size, digits of an int, and set items or dict keys that share a hash. The untrusted side may send
any bytes it likes; ``loads`` rebuilds only plain values from them (or raises NotPlain), so a
forged frame is no stronger than a value the program could have returned.

JSON form: None/bool/int/float/str are themselves; every other value is a list whose first item
is a tag: ["l", ...], ["t", ...], ["s", ...], ["f", ...], ["d", k1, v1, k2, v2, ...],
["b", latin-1 text], ["c", real, imag], and ["r", name] -- a reference to a name of the
program's namespace (how the judge passes one of the program's own functions as an argument).

Standard library only: the warm interpreter imports this file as a top-level module.
"""

from __future__ import annotations

import json
import sys

MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
MAX_BYTES = 16 * 1024 * 1024
MAX_INT_BITS = 13_000  # about 3,900 decimal digits: under CPython's int/str conversion limit
MAX_COLLISIONS = 1000  # set items or dict keys that share a hash with another one
MAX_MESSAGE = 2000  # characters of an exception's message (or another note) that cross over

_NONE = type(None)
_SCALARS = (_NONE, bool, float, str)
_SEQUENCES = {list: "l", tuple: "t", set: "s", frozenset: "f"}
_BUILD = {"l": list, "t": tuple, "s": set, "f": frozenset}
_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode
_loads = json.JSONDecoder().decode


class NotPlain(ValueError):
    """The value is not plain builtin data, or is over a cap."""


class _Budget:
    """What is left of the caps for one value; none for the judge's own messages (capped=False)."""

    __slots__ = ("items", "capped")

    def __init__(self, capped: bool = True) -> None:
        self.items = MAX_ITEMS if capped else sys.maxsize
        self.capped = capped

    def take(self, n: int) -> None:
        self.items -= n
        if self.items < 0:
            raise NotPlain(f"more than {MAX_ITEMS:,} items")


def _take_text(value: str | bytes, budget: _Budget) -> None:
    if budget.capped and len(value) > MAX_BYTES:
        raise NotPlain(f"a text over {MAX_BYTES:,} characters")
    budget.take(len(value) // 64)


def _describe(kind: type) -> str:
    name = kind.__name__ if isinstance(getattr(kind, "__name__", None), str) else "object"
    return f"a {name[:100]}, not plain data"


def _to_json(value: object, depth: int, budget: _Budget, refs: type | None) -> object:
    kind = type(value)
    if kind in _SCALARS:
        if kind is str:
            _take_text(value, budget)
        return value
    if kind is int:
        if value.bit_length() > MAX_INT_BITS:
            raise NotPlain(f"an int over {MAX_INT_BITS} bits")
        return value
    if kind is bytes:
        _take_text(value, budget)
        return ["b", value.decode("latin-1")]
    if kind is complex:
        return ["c", value.real, value.imag]
    if kind is refs and refs is not None:
        return ["r", value.name]
    if budget.capped and depth >= MAX_DEPTH:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}")
    tag = _SEQUENCES.get(kind)
    if tag is not None:
        budget.take(len(value))
        out = [tag, *(_to_json(item, depth + 1, budget, refs) for item in value)]
        if tag in ("s", "f") and budget.capped:  # once the items are known to be plain data
            _few_collisions(value)
        return out
    if kind is dict:
        budget.take(2 * len(value))
        out = ["d"]
        for key, item in dict.items(value):
            out.append(_to_json(key, depth + 1, budget, refs))
            out.append(_to_json(item, depth + 1, budget, refs))
        if budget.capped:
            _few_collisions(value)
        return out
    raise NotPlain(_describe(kind))


def dumps(value: object, refs: type | None = None, capped: bool = True) -> str:
    """JSON text for a plain value; instances of ``refs`` (the judge's proxies of the program's
    names) travel as references to their ``name``. ``capped=False``: no caps but the int's (for
    the judge's messages to the run, which may pass back any value the run returned: a value at
    a cap where it was returned could be over it one level deeper, and a call the judge cannot
    send must never move its test into the run)."""
    try:
        text = _dumps(_to_json(value, 0, _Budget(capped), refs))
    except RecursionError:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}") from None
    if capped and len(text) > MAX_BYTES:
        raise NotPlain(f"larger than {MAX_BYTES:,} bytes encoded")
    return text


def _from_json(node: object, depth: int, resolve, budget: _Budget) -> object:
    """Counts items as _to_json does (so a value the program's side encoded always decodes), and
    refuses a forged frame of more before building it: 16 MiB of empty sets would cost the judge
    a gigabyte and seconds."""
    kind = type(node)
    if kind in _SCALARS:
        if kind is str:
            _take_text(node, budget)
        return node
    if kind is int:
        if node.bit_length() > MAX_INT_BITS:
            raise NotPlain(f"an int over {MAX_INT_BITS} bits")
        return node
    if kind is not list or not node or (budget.capped and depth >= MAX_DEPTH):
        raise NotPlain("malformed value")
    tag, items = node[0], node[1:]
    if tag in _BUILD:
        budget.take(len(items))
        values = [_from_json(item, depth + 1, resolve, budget) for item in items]
        if tag in ("s", "f") and budget.capped:
            _few_collisions(values)
        return _BUILD[tag](values)
    if tag == "d" and len(items) % 2 == 0:
        budget.take(len(items))
        values = [_from_json(item, depth + 1, resolve, budget) for item in items]
        if budget.capped:
            _few_collisions(values[::2])
        return dict(zip(values[::2], values[1::2]))
    if tag == "b" and len(items) == 1 and type(items[0]) is str:
        _take_text(items[0], budget)
        return items[0].encode("latin-1")
    if tag == "c" and len(items) == 2 and all(type(x) in (int, float) for x in items):
        return complex(items[0], items[1])
    if tag == "r" and resolve is not None and len(items) == 1 and type(items[0]) is str:
        return resolve(items[0])
    raise NotPlain("malformed value")


def _few_collisions(keys) -> None:
    """Refuses set items or dict keys of which many share a hash (distinct ints k * (2**61 - 1),
    say): building the set would take quadratic time, in C, where nothing can interrupt it. A
    set the program really returned has distinct items, of which almost none share a hash."""
    # Sized first: the hashes are only counted for the rare set or dict over the cap.
    if len(keys) > MAX_COLLISIONS and len(keys) - len({hash(key) for key in keys}) > MAX_COLLISIONS:
        raise NotPlain(f"more than {MAX_COLLISIONS} set items or dict keys with the same hash")


def loads(text: str | bytes, resolve=None, capped: bool = True) -> object:
    """The plain value in ``text``; NotPlain for anything else. ``resolve(name)`` turns a
    reference into the named object (the program's side only). ``capped=False`` for the
    judge's messages (see dumps)."""
    if capped and len(text) > MAX_BYTES:
        raise NotPlain(f"larger than {MAX_BYTES:,} bytes encoded")
    try:
        return _from_json(_loads(text if type(text) is str else text.decode("ascii")), 0, resolve,
                          _Budget(capped))
    except NotPlain:
        raise
    except (ValueError, TypeError, RecursionError, UnicodeError, OverflowError):
        # TypeError: an unhashable item in a set or as a dict key (only a forged frame has one)
        raise NotPlain("malformed value") from None
