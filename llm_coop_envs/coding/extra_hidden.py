"""Hidden tests written for the ``v2`` rules, where a problem's own hidden asserts cannot do the job.

Two cases, each a list of asserts appended to the row's ``check`` before the expected values are
taken from the reference (where the dataset ships one):

* every assert of the problem is a prompt example (HumanEval/34, CoopHumanEval/10): a lookup table
  of the docstring would pass them all, so a problem needs inputs of its own that respect the
  prompt's stated preconditions;
* the hidden asserts never tell the reference ``aux`` from a stand-in (``coop_basics``
  ``t3/best_buzz_word`` and ``t3/top_post``: every hidden winner came first): a main that ignores ``aux`` would be paid as if it needed it, or an honest
  pair would not be, so the counterfactual rule of :mod:`llm_coop_envs.coding.dependence` needs an
  input where ``aux`` matters.

The expected values written here are checked against the dataset's reference, and for CoopHumanEval
(which ships none) against :data:`OWN_REFERENCES`, by the package's tests.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

EXTRA_HIDDEN: dict[tuple[str, str], tuple[str, ...]] = {
    ("humaneval", "HumanEval/34"): (
        "assert candidate([]) == []",
        "assert candidate([7, 7, 7]) == [7]",
        "assert candidate([-4, 10, -4, 0, 3]) == [-4, 0, 3, 10]",
        "assert candidate([2, 1]) == [1, 2]",
    ),
    ("coop_humaneval", "CoopHumanEval/10"): (
        "assert candidate(6) == 233",
        "assert candidate(7) == 1597",
        "assert candidate(8) == 28657",
    ),
    ("coop_basics", "coop_basics/t3/best_buzz_word"): (  # its hidden winners all came first
        "assert candidate(['a', 'bcd']) == 'bcd'",
        "assert candidate(['oo', 'xy!', 'e']) == 'xy!'",
    ),
    ("coop_basics", "coop_basics/t3/top_post"): (
        "assert candidate([{'id': 'a', 'likes': 1, 'comments': 0, 'shares': 0}, "
        "{'id': 'b', 'likes': 0, 'comments': 1, 'shares': 0}]) == 'b'",
        "assert candidate([{'id': 'u', 'likes': 2, 'comments': 0, 'shares': 0}, "
        "{'id': 'v', 'likes': 0, 'comments': 0, 'shares': 1}, {'id': 'w', 'likes': 4, 'comments': 0, 'shares': 0}]) == 'w'",
    ),
}
"""``(dataset, task_id)`` -> asserts on ``candidate`` added to the problem's hidden tests under ``v2``."""

OWN_REFERENCES: dict[tuple[str, str], str] = {
    ("coop_humaneval", "CoopHumanEval/10"): (
        "def prime_fib(n):\n"
        "    def is_prime(k):\n"
        "        return k > 1 and all(k % d for d in range(2, int(k ** 0.5) + 1))\n"
        "    a, b, found = 0, 1, 0\n"
        "    while True:\n"
        "        a, b = b, a + b\n"
        "        if is_prime(a):\n"
        "            found += 1\n"
        "            if found == n:\n"
        "                return a\n"
    ),
}
"""References written for problems whose dataset ships none, used only to check :data:`EXTRA_HIDDEN`."""


def with_extra_hidden(dataset: str, row: Mapping[str, Any]) -> Mapping[str, Any]:
    """``row`` with its written hidden asserts appended to ``check`` (the row itself when it has none)."""
    extra = EXTRA_HIDDEN.get((dataset, row.get("task_id")))
    if not extra:
        return row
    module = ast.parse(row["test"])
    check = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    check.body.extend(ast.parse("\n".join(extra)).body)
    return {**row, "test": ast.unparse(module) + "\n"}
