"""The draw checks of ``coop_procedural-v1``: a draw is kept only when its tests need the task done.

v0 checked that a constant, the identity and a table of the public examples fail a hidden test. That
left two holes: main alone could recover a helper-only fact from its own docstring examples (the
fact's few values narrowed down by one or two examples), and problem-blind one-liners passed most
hidden tests of whole cells. So a v1 draw is also rejected (:class:`~.draft.Rejected`, the next seed
is drawn) when

* **the examples give the fact away**: of the family's alternatives for a helper-only fact (the other
  reference ``aux`` functions the family draws at that level, :func:`alternatives`), fewer than
  :data:`MIN_ALTERNATIVES` agree with every public example when main's reference runs with them;
* **a problem-blind reply passes more than a third of the hidden tests**: the most common expected
  value, ``[]``, the first item, ``max``, ``min``, the length, the identity, or a table of the public
  examples (:data:`BLIND_REPLIES`);
* **one expected value covers more than half of the hidden tests**;
* **a stand-in ``aux`` passes every hidden test** with main's reference (the counterfactual rule of
  :mod:`llm_coop_envs.coding.dependence` could not tell the reference pair from a main that ignores ``aux``).

Everything here runs in the generating process: the references and the alternatives are the
package's own code.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import math
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from llm_coop_envs.coding.dependence import STAND_INS
from llm_coop_envs.coding.procedural.draft import Draft, Rejected

MIN_ALTERNATIVES = 3
MAX_BLIND_SHARE = 1 / 3
MAX_SHARED_EXPECTED = 1 / 2
ALTERNATIVE_DRAWS = 200
"""Drafts drawn (from a stream of their own) to list a family's alternatives at a level."""

Test = dict[str, Any]


def check_draw(draft: Draft, family: str, level: int, public: list[Test], hidden: list[Test]) -> None:
    """Raise :class:`Rejected` when ``draft``'s tests fail a check of the module docstring."""
    same = functools.partial(judged_equal, compare=draft.compare)
    expected = Counter(_key(t["expected"]) for t in hidden)
    if expected.most_common(1)[0][1] > MAX_SHARED_EXPECTED * len(hidden):
        raise Rejected("more than half of the hidden tests share one expected value")
    for name, reply in blind_replies(public, hidden).items():
        if _passes(reply, hidden, same) > MAX_BLIND_SHARE * len(hidden):
            raise Rejected(f"the problem-blind reply {name!r} passes more than a third of the hidden tests")
    namespace, main = _reference_main(draft)
    for name in STAND_INS:
        namespace["aux"] = _function(stand_in(name))
        if _passes(main, hidden, same) == len(hidden):
            raise Rejected(f"the stand-in aux {name!r} passes every hidden test")
    left = fact_agreement(draft, family, level, public).left(range(len(public)))
    if left < MIN_ALTERNATIVES:
        raise Rejected(f"the public examples leave {left} of the family's alternatives for the fact")


@dataclasses.dataclass(frozen=True)
class FactAgreement:
    """Which of ``tests`` each of the family's other alternatives for the helper-only fact agrees on
    (with main's reference); ``None`` when the draft has no such fact."""

    agreeing: tuple[frozenset[int], ...] | None

    def left(self, chosen) -> int:
        """The alternatives (the draft's own counted) that agree with every test of ``chosen``."""
        if self.agreeing is None:
            return MIN_ALTERNATIVES
        chosen = frozenset(chosen)
        return 1 + sum(chosen <= tests for tests in self.agreeing)


def fact_agreement(draft: Draft, family: str, level: int, tests: list[Test]) -> FactAgreement:
    if not draft.helper_fact:
        return FactAgreement(None)
    same = functools.partial(judged_equal, compare=draft.compare)
    own = normalised(draft.reference_helper)
    namespace, main = _reference_main(draft)
    agreeing = []
    for source, function in alternatives(family, level).items():
        if source != own:
            namespace["aux"] = function
            agreeing.append(frozenset(i for i, t in enumerate(tests) if _passes(main, [t], same)))
    return FactAgreement(tuple(agreeing))


def blind_replies(public: list[Test], hidden: list[Test]) -> dict[str, Callable[..., Any]]:
    """The problem-blind replies of the module docstring, as functions of main's arguments."""
    common = Counter(_key(t["expected"]) for t in hidden).most_common(1)[0][0]
    value = next(t["expected"] for t in hidden if _key(t["expected"]) == common)
    table = {_key(t["args"]): t["expected"] for t in public}
    return {
        "the most common expected value": lambda *args: copy.deepcopy(value),
        "[]": lambda *args: [],
        "the first item": lambda *args: args[0][0],
        "max": lambda *args: max(args[0]),
        "min": lambda *args: min(args[0]),
        "the length": lambda *args: len(args[0]),
        "the identity": lambda *args: args[0],
        "a table of the public examples": lambda *args: table.get(_key(list(args))),
    }


def stand_in(name: str) -> str:
    """The source of a stand-in ``aux`` (the same functions the judge substitutes)."""
    return f"def aux(*args, **kwargs):\n    {STAND_INS[name]}\n"


@functools.lru_cache(maxsize=256)
def alternatives(family: str, level: int) -> dict[str, Callable[..., Any]]:
    """The distinct reference ``aux`` functions that ``family`` draws at ``level`` with a helper-only
    fact, from a stream of seeds of their own: normalised source -> the function."""
    from llm_coop_envs.coding.procedural.families import draft_for  # the families import the draft module

    found: dict[str, Callable[..., Any]] = {}
    for index in range(ALTERNATIVE_DRAWS):
        try:
            draft = draft_for(family, random.Random(f"alternatives/{family}/{level}/{index}"), level)
        except Rejected:
            continue
        key = normalised(draft.reference_helper) if draft.helper_fact else None
        if key is not None and key not in found:
            found[key] = _function(draft.reference_helper)
    return found


@functools.lru_cache(maxsize=65536)
def normalised(helper: str) -> str:
    """``aux``'s source with its parameters renamed ``p0``, ``p1``, ... (the same fact, whatever the item's name)."""
    function = ast.parse(helper).body[0]
    names = {a.arg: f"p{i}" for i, a in enumerate(function.args.args)}
    for node in ast.walk(function):
        if isinstance(node, ast.arg) and node.arg in names:
            node.arg = names[node.arg]
        elif isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return ast.unparse(function)


def _reference_main(draft: Draft) -> tuple[dict[str, Any], Callable[..., Any]]:
    """Main's reference and the namespace it reads ``aux`` from (set ``namespace["aux"]`` to swap it)."""
    namespace: dict[str, Any] = {}
    exec(compile(draft.reference_main, f"<{draft.entry_point}>", "exec"), namespace)
    return namespace, namespace[draft.entry_point]


@functools.lru_cache(maxsize=4096)
def _function(source: str) -> Callable[..., Any]:
    """The function ``aux`` defined by ``source`` (the package's own code)."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<aux>", "exec"), namespace)
    return namespace["aux"]


def _passes(function: Callable[..., Any], tests: list[Test], same: Callable[[Any, Any], bool]) -> int:
    passed = 0
    for test in tests:
        try:
            # No copy of the arguments: the families' references never mutate them (nor do the
            # stand-ins and blind replies), and copying was most of a draw's cost.
            passed += bool(same(function(*test["args"]), test["expected"]))
        except Exception:  # noqa: BLE001 -- a stand-in or blind reply failing on an input fails that test
            continue
    return passed


def judged_equal(actual: Any, expected: Any, compare: str = "eq") -> bool:
    """The hidden asserts' own comparison: ``==``, or ``math.isclose`` for a float-valued family."""
    if compare == "isclose" and isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        return math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-9)
    return bool(actual == expected)


def _key(value: Any) -> str:
    return repr(round(value, 6)) if isinstance(value, float) else repr(value)


def violations(row: dict[str, Any]) -> list[str]:
    """The checks a finished row fails (none for a v1 row), re-run from the row's own fields."""
    compare = next((t.get("compare", "eq") for t in row["tests"]), "eq")
    draft = Draft(entry_point=row["entry_point"], params="", summary="", helper_signature=row["helper"]["signature"],
                  helper_doc="", reference_helper=row["reference_helper"], reference_main=row["reference_main"],
                  inputs=[], helper_fact=row["helper_fact"], compare=compare)
    try:
        check_draw(draft, row["family"], row["level"], row["public_tests"], row["tests"])
    except Rejected as rejected:
        return [str(rejected)]
    return []


def fact_spread(family: str, level: int, draws: int = 2000) -> tuple[int, float]:
    """(distinct values, largest share) of the helper-only fact over the family's own draws at ``level``."""
    counts: Counter[str] = Counter()
    from llm_coop_envs.coding.procedural.families import draft_for

    for index in range(draws):
        draft = draft_for(family, random.Random(f"spread/{family}/{level}/{index}"), level)
        if draft.helper_fact:
            counts[normalised(draft.reference_helper)] += 1
    total = sum(counts.values())
    return len(counts), (max(counts.values()) / total if total else 0.0)
