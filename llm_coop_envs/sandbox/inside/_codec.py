"""The plain-data codec: the only form in which values cross between the judge and the program.

Exact builtin types only (``type(x) is T``, never a subclass): None, bool, int, float (nan and
inf included), complex, str, bytes, and list, tuple, set, frozenset and dict of those. Anything
else raises NotPlain, and nothing is ever pickled. Caps: nesting depth, number of items, total
size, digits of an int, and the work of comparing set items or dict keys that share a hash,
counted across the whole value. The untrusted side may send any bytes it likes; ``loads``
rebuilds only plain values from them (or raises NotPlain), so a forged frame is no stronger than
a value the program could have returned, and with a deadline it stops building once that passes.

JSON form: None/bool/int/float/str are themselves; every other value is a list whose first item
is a tag: ["l", ...], ["t", ...], ["s", ...], ["f", ...], ["d", k1, v1, k2, v2, ...],
["b", latin-1 text], ["c", real, imag], and ["r", name] -- a reference to a name of the
program's namespace (how the judge passes one of the program's own functions as an argument).

Standard library only: the warm interpreter imports this file as a top-level module.
"""

from __future__ import annotations

import gc
import json
import sys
import time

MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
MAX_BYTES = 16 * 1024 * 1024
MAX_INT_BITS = 13_000  # about 3,900 decimal digits: under CPython's int/str conversion limit
# Building a set or dict compares each item with the earlier ones of the same hash, in C, where
# no alarm can stop it: the sum over a value's sets and dicts of (items in a hash group - 1) x
# (their sizes) is capped. 1,000 distinct ints of one hash in one set cost 999,000.
MAX_COLLISION_WORK = 1_000_000
MAX_MESSAGE = 2000  # characters of an exception's message (or another note) that cross over
MAX_TYPE_NAME = 60  # characters of an exception's type name
_CHECK_EVERY = 4096  # items built between two looks at the clock (loads with a deadline)

_NONE = type(None)
_SCALARS = (_NONE, bool, float, str)
_SEQUENCES = {list: "l", tuple: "t", set: "s", frozenset: "f"}
_BUILD = {"l": list, "t": tuple, "s": set, "f": frozenset}
_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode
_loads = json.JSONDecoder().decode


class NotPlain(ValueError):
    """The value is not plain builtin data, or is over a cap."""


class OutOfTime(NotPlain):
    """loads() reached its deadline before the value was built."""


def type_name(name: object) -> str:
    """An exception's type name as the judge reports it: a Python identifier of at most
    MAX_TYPE_NAME ASCII characters, else "Exception". A program names its own classes, and
    their names reach the feedback: they must not carry text of its choosing (a forged line)."""
    if type(name) is str and len(name) <= MAX_TYPE_NAME and name.isascii() and name.isidentifier():
        return name
    return "Exception"


class _Budget:
    """What is left of the caps for one value; none for the judge's own messages (capped=False)."""

    __slots__ = ("items", "work", "capped", "deadline", "tick")

    def __init__(self, capped: bool = True, deadline: float | None = None) -> None:
        self.items = MAX_ITEMS if capped else sys.maxsize
        self.work = MAX_COLLISION_WORK
        self.capped = capped
        self.deadline, self.tick = deadline, _CHECK_EVERY

    def take(self, n: int) -> None:
        self.items -= n
        if self.items < 0:
            raise NotPlain(f"more than {MAX_ITEMS:,} items")
        if self.deadline is not None:
            self.tick -= n + 1
            if self.tick <= 0:
                self.tick = _CHECK_EVERY
                self.in_time()

    def in_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime("the value took longer to read than its deadline allowed")

    def compare(self, keys: list, sizes: list[int]) -> int:
        """Charges the work of building a set or dict of `keys` (whose sizes are `sizes`):
        in each group of keys that share a hash, each key may be compared with every other.
        Returns that work (comparing two such sets later costs about as much again)."""
        if not self.capped or len(keys) < 2:
            return 0
        hashes = [hash(key) for key in keys]  # TypeError for an unhashable key: malformed
        if len(set(hashes)) == len(hashes):
            return 0
        groups: dict[int, list[int]] = {}
        for h, size in zip(hashes, sizes):
            group = groups.setdefault(h, [0, 0])
            group[0] += 1
            group[1] += size
        work = sum((count - 1) * size for count, size in groups.values())
        self.work -= work
        if self.work < 0:
            raise NotPlain(f"set items or dict keys with the same hash: more than "
                           f"{MAX_COLLISION_WORK:,} units of work to compare them")
        return work


def _take_text(value: str | bytes, budget: _Budget) -> int:
    """Charges a text; returns its size (what comparing it costs, in items)."""
    if budget.capped and len(value) > MAX_BYTES:
        raise NotPlain(f"a text over {MAX_BYTES:,} characters")
    size = len(value) // 64
    budget.take(size)
    return 1 + size


def _describe(kind: type) -> str:
    name = kind.__name__ if isinstance(getattr(kind, "__name__", None), str) else "object"
    return f"a {name[:100]}, not plain data"


# Both directions return (result, size): size is what comparing the value with an equal-hash one
# may cost, in items (a set's own collision work counted twice: comparing two sets looks each
# item of one up in the other). The encoder and the decoder count alike, so a value the
# program's side encoded always decodes.

def _to_json(value: object, depth: int, budget: _Budget, refs: type | None) -> tuple[object, int]:
    kind = type(value)
    if kind in _SCALARS:
        return value, _take_text(value, budget) if kind is str else 1
    if kind is int:
        if value.bit_length() > MAX_INT_BITS:
            raise NotPlain(f"an int over {MAX_INT_BITS} bits")
        return value, 1
    if kind is bytes:
        return ["b", value.decode("latin-1")], _take_text(value, budget)
    if kind is complex:
        return ["c", value.real, value.imag], 1
    if kind is refs and refs is not None:
        return ["r", value.name], 1
    if budget.capped and depth >= MAX_DEPTH:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}")
    tag = _SEQUENCES.get(kind)
    if tag is not None:
        budget.take(len(value))
        pairs = [_to_json(item, depth + 1, budget, refs) for item in value]
        sizes = [size for _, size in pairs]
        size = 1 + sum(sizes)
        if tag in ("s", "f"):  # iterated again in the same order: keys and sizes match
            size += 2 * budget.compare(list(value), sizes)
        return [tag, *(node for node, _ in pairs)], size
    if kind is dict:
        budget.take(2 * len(value))
        out, sizes = ["d"], []
        for key, item in dict.items(value):
            for part in (key, item):
                node, size = _to_json(part, depth + 1, budget, refs)
                out.append(node)
                sizes.append(size)
        return out, 1 + sum(sizes) + budget.compare(list(value), sizes[::2])
    raise NotPlain(_describe(kind))


def dumps(value: object, refs: type | None = None, capped: bool = True) -> str:
    """JSON text for a plain value; instances of ``refs`` (the judge's proxies of the program's
    names) travel as references to their ``name``. ``capped=False``: no caps but the int's (for
    the judge's messages to the run, which may pass back any value the run returned: a value at
    a cap where it was returned could be over it one level deeper, and a call the judge cannot
    send must never move its test into the run)."""
    try:
        text = _dumps(_to_json(value, 0, _Budget(capped), refs)[0])
    except RecursionError:
        raise NotPlain(f"nested deeper than {MAX_DEPTH}") from None
    if capped and len(text) > MAX_BYTES:
        raise NotPlain(f"larger than {MAX_BYTES:,} bytes encoded")
    return text


def _from_json(node: object, depth: int, resolve, budget: _Budget) -> tuple[object, int]:
    """Counts items as _to_json does, and refuses a forged frame of more before building it:
    16 MiB of empty sets would cost the judge a gigabyte and seconds; many sets of one-hash
    keys, minutes."""
    kind = type(node)
    if kind in _SCALARS:
        return node, _take_text(node, budget) if kind is str else 1
    if kind is int:
        if node.bit_length() > MAX_INT_BITS:
            raise NotPlain(f"an int over {MAX_INT_BITS} bits")
        return node, 1
    if kind is not list or not node or (budget.capped and depth >= MAX_DEPTH):
        raise NotPlain("malformed value")
    tag, items = node[0], node[1:]
    if tag in _BUILD or (tag == "d" and len(items) % 2 == 0):
        budget.take(len(items))
        pairs = [_from_json(item, depth + 1, resolve, budget) for item in items]
        values = [value for value, _ in pairs]
        sizes = [size for _, size in pairs]
        size = 1 + sum(sizes)
        if tag == "d":  # the keys' work is charged before the dict is built
            size += budget.compare(values[::2], sizes[::2])
            return dict(zip(values[::2], values[1::2])), size
        if tag in ("s", "f"):
            size += 2 * budget.compare(values, sizes)
        return _BUILD[tag](values), size
    if tag == "b" and len(items) == 1 and type(items[0]) is str:
        return items[0].encode("latin-1"), _take_text(items[0], budget)
    if tag == "c" and len(items) == 2 and all(type(x) in (int, float) for x in items):
        return complex(items[0], items[1]), 1
    if tag == "r" and resolve is not None and len(items) == 1 and type(items[0]) is str:
        return resolve(items[0]), 1
    raise NotPlain("malformed value")


def loads(text: str | bytes, resolve=None, capped: bool = True,
          deadline: float | None = None) -> object:
    """The plain value in ``text``; NotPlain for anything else, OutOfTime once `deadline`
    (time.monotonic()) has passed. ``resolve(name)`` turns a reference into the named object
    (the program's side only). ``capped=False`` for the judge's messages (see dumps)."""
    if capped and len(text) > MAX_BYTES:
        raise NotPlain(f"larger than {MAX_BYTES:,} bytes encoded")
    # Parsing and building make no cycles; with the collector on, the millions of containers a
    # forged 16 MiB frame holds would trigger its full passes again and again (seconds, not
    # under a second).
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = _loads(text if type(text) is str else text.decode("ascii"))
        # The clock is first read with the first items counted (take), after the item cap.
        return _from_json(tree, 0, resolve, _Budget(capped, deadline))[0]
    except NotPlain:
        raise
    except (ValueError, TypeError, RecursionError, UnicodeError, OverflowError):
        # TypeError: an unhashable item in a set or as a dict key (only a forged frame has one)
        raise NotPlain("malformed value") from None
    finally:
        if collecting:
            gc.enable()
