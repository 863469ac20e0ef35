"""Public and hidden tests: feedback may quote the public ones; only the hidden ones score (``v1`` rules).

A policy that is shown the asserts it is scored on can pass them with a lookup table instead of a
solution. So each problem's asserts are split by content:

* **public**: the asserts of the row's ``public_test`` source when it has one (the embedded suites);
  otherwise the asserts that call the entry point with the arguments of an example in the prompt
  (HumanEval's docstring examples: the agents read those anyway); for datasets whose prompts show no
  example (MBPP, CoopHumanEval) the first assert is declared public when the problem has at least
  ``MIN_TESTS_TO_SPLIT`` asserts;
* **hidden**: every other assert, except that a hidden assert whose call equals a public one counts as
  public (the same call cannot be both shown and scored);
* a problem left with no hidden assert is not split: every assert scores, nothing is public, and
  feedback names each failing call and its error type, never an expected value.

Two calls are equal when their argument syntax trees are (``f([1,2])`` equals ``f([1, 2])``).
"""

from __future__ import annotations

import ast

from llm_coop_envs.coding.tests_split import TestCase, split_check

MIN_TESTS_TO_SPLIT = 3
DECLARED_PUBLIC = {"mbpp": 1, "coop_humaneval": 1}
"""Datasets whose prompts show no example: how many leading asserts are public."""
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


def split_public(tests: tuple[TestCase, ...], prompt: str, entry_point: str, public_source: str | None,
                 dataset: str) -> tuple[tuple[TestCase, ...], tuple[TestCase, ...]]:
    """``(public, hidden)`` for a problem's asserts ``tests`` (see the module docstring)."""
    if public_source:
        public = tuple(t for t in split_check(public_source) if test_calls(t))
        shown = {key for t in public for key in test_calls(t)}
    else:
        shown = prompt_calls(prompt, entry_point)
        declared = DECLARED_PUBLIC.get(dataset, 0) if len(tests) >= MIN_TESTS_TO_SPLIT else 0
        shown |= {key for t in tests[:declared] for key in test_calls(t)}
        public = tuple(t for t in tests if test_calls(t) & shown)
    hidden = tuple(t for t in tests if not test_calls(t) & shown)
    if not hidden:
        return (), tests
    return public, hidden


def test_calls(test: TestCase) -> frozenset[str]:
    """The calls of ``candidate`` in an assert, each as the dump of its arguments."""
    try:
        tree = ast.parse(test.label)
    except _PARSE_ERRORS:
        return frozenset()
    return frozenset(_call_key(node) for node in ast.walk(tree)
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate")


def prompt_calls(prompt: str, entry_point: str) -> set[str]:
    """Every call of ``entry_point`` written in the prompt (``>>> f(1, 2)``, ``f(1, 2) == 3``, ``f(1, 2) ➞ 3``)."""
    calls, start = set(), prompt.find(entry_point + "(")
    while start != -1:
        end = _closing_paren(prompt, start + len(entry_point))
        if end is not None:
            try:
                node = ast.parse("candidate" + prompt[start + len(entry_point): end + 1], mode="eval").body
            except _PARSE_ERRORS:
                node = None
            if isinstance(node, ast.Call):
                calls.add(_call_key(node))
        start = prompt.find(entry_point + "(", start + 1)
    return calls


def _call_key(call: ast.Call) -> str:
    return ast.dump(ast.Tuple(elts=list(call.args), ctx=ast.Load())) + ast.dump(ast.Tuple(
        elts=[ast.Constant(k.arg) for k in call.keywords] + [k.value for k in call.keywords], ctx=ast.Load()))


def _closing_paren(text: str, open_at: int) -> int | None:
    """The index of the parenthesis closing the one at ``open_at`` (brackets and quotes respected)."""
    depth, quote, index = 0, None, open_at
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
        elif char == "\n" and depth > 8:
            return None
        index += 1
    return None
