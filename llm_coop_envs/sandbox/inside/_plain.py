"""PLAIN_CHECK, the function guarded asserts call inside the sandbox (see _guard.py): only for
test snippets that fall back to running in the child (_judge.py).

Loaded as a top-level module by the warm interpreter before any untrusted code runs, so the
builtins it relies on are bound here, at import, not looked up when a program may have
replaced them.
"""

from __future__ import annotations

NAME = "__sandbox_plain__"
"""The name guarded test snippets call (_guard.py rewrites asserts to call it; the child binds it)."""

_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CONTAINERS = frozenset({list, tuple, set, frozenset})
_MAX_ITEMS = 10_000_000


class UntrustedValue(AssertionError):
    """An assert compared an object that is not plain builtin data."""


def _offender(value: object, _type=type, _id=id, _dict=dict, _len=len, _set=set) -> object:
    """The first value reachable from `value` that is not plain builtin data, else None...
    returned inside a 1-tuple so that a None offender is distinguishable."""
    seen: set[int] = _set()
    stack = [value]
    budget = _MAX_ITEMS
    while stack:
        item = stack.pop()
        kind = _type(item)
        if kind in _SCALARS:
            continue
        if kind not in _CONTAINERS and kind is not _dict:
            return (item,)
        if _id(item) in seen:
            continue
        seen.add(_id(item))
        budget -= _len(item)
        if budget < 0:
            return (item,)
        if kind is _dict:
            stack.extend(_dict.keys(item))
            stack.extend(_dict.values(item))
        else:
            stack.extend(item)
    return None


def plain(value: object, _type=type) -> object:
    """`value` itself when it is plain data; otherwise the assert fails."""
    if _type(value) in _SCALARS:
        return value
    found = _offender(value)
    if found is not None:
        raise UntrustedValue(
            f"refusing to compare an object of type {_type(found[0]).__name__}: "
            "tests only trust plain builtin data")
    return value
