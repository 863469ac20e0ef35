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

Under the ``v2`` rules (``examples=True``) a prompt's examples are also recognised when written as
``Input: <arguments>`` (``Input: arr = [1, 2], k = 3`` names the parameters) or as ``g(<arguments>) ==> y``
under another function's name (HumanEval/68, /107, /81), so that none of them is hidden and shown at
once. A problem left with no public test gets its docstring's ``>>>`` examples as public tests
(:func:`doctest_publics`), so feedback has something to say.
"""

from __future__ import annotations

import ast
import doctest
import re

from llm_coop_envs.coding.tests_split import SEED_LINE, TestCase, split_check

MIN_TESTS_TO_SPLIT = 3
DECLARED_PUBLIC = {"mbpp": 1, "coop_humaneval": 1}
"""Datasets whose prompts show no example: how many leading asserts are public."""
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


def split_public(tests: tuple[TestCase, ...], prompt: str, entry_point: str, public_source: str | None,
                 dataset: str, examples: bool = False) -> tuple[tuple[TestCase, ...], tuple[TestCase, ...]]:
    """``(public, hidden)`` for a problem's asserts ``tests`` (see the module docstring)."""
    if public_source:
        public = tuple(t for t in split_check(public_source) if test_calls(t))
        shown = {key for t in public for key in test_calls(t)}
    else:
        shown = prompt_calls(prompt, entry_point)
        if examples:
            shown |= written_example_calls(prompt, entry_point)
        declared = DECLARED_PUBLIC.get(dataset, 0) if len(tests) >= MIN_TESTS_TO_SPLIT else 0
        shown |= {key for t in tests[:declared] for key in test_calls(t)}
        public = tuple(t for t in tests if test_calls(t) & shown)
    hidden = tuple(t for t in tests if not test_calls(t) & shown)
    if not hidden:
        return (), tests
    if examples and not public:
        public = doctest_publics(prompt, entry_point)
    return public, hidden


def doctest_publics(prompt: str, entry_point: str) -> tuple[TestCase, ...]:
    """The prompt's ``>>> f(<literals>)`` examples whose shown result is a literal (not a float), as
    asserts: the public tests of a problem that has none among its own asserts (``v2`` rules)."""
    try:
        examples = doctest.DocTestParser().get_examples(prompt)
    except ValueError:
        return ()
    pairs = [(e.source.strip(), "\n".join(line for line in e.want.splitlines()
                                            if line.strip() not in ('"""', "'''"))) for e in examples]
    tests = []
    for source, want in pairs + _one_line_examples(prompt, entry_point):
        call = _parse_call(source.replace(entry_point + "(", "candidate(", 1))
        try:
            expected = ast.literal_eval(want.strip())
            arguments = [ast.literal_eval(a) for a in call.args] if call is not None and not call.keywords else None
        except _PARSE_ERRORS:
            continue
        if arguments is None or not source.startswith(entry_point + "(") or _has_float(expected):
            continue
        label = f"assert {ast.unparse(call)} == {expected!r}"
        tests.append(TestCase(source=SEED_LINE + label + "\n", label=label))
    return tuple(tests)


_ONE_LINE = re.compile(r"^\s*(?P<call>[A-Za-z_]\w*\(.*\))\s*(?:==>|==|➞|=>|->|→)\s*(?P<want>.+?)\s*$")


def _one_line_examples(prompt: str, entry_point: str) -> list[tuple[str, str]]:
    """``f(<arguments>) ==> y`` (or ``==``, ``➞``, ``=>``, ``->``, ``→``) examples written on one line."""
    found = []
    for line in prompt.splitlines():
        match = _ONE_LINE.match(line)
        if match and match.group("call").startswith(entry_point + "("):
            found.append((match.group("call"), match.group("want")))
    return found


def _has_float(value) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_float(k) or _has_float(v) for k, v in value.items())
    return False


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


_INPUT = re.compile(r"^[ \t]*Input:[ \t]*(\S.*)$", re.MULTILINE)
_ARROW = re.compile(r"\b([A-Za-z_]\w*)\(")


def written_example_calls(prompt: str, entry_point: str) -> set[str]:
    """The calls of examples written ``Input: <arguments>`` or ``g(<arguments>) ==> y`` (any name ``g``)."""
    calls = set()
    parameters = _parameters(prompt, entry_point)
    for match in _INPUT.finditer(prompt):
        node = _parse_call("candidate(" + match.group(1).strip() + ")")
        if node is not None:
            calls.add(_call_key(_positional(node, parameters)))
    for line in prompt.splitlines():
        if "==>" not in line:
            continue
        for match in _ARROW.finditer(line.split("==>")[0]):
            end = _closing_paren(line, match.end() - 1)
            node = _parse_call("candidate" + line[match.end() - 1: end + 1]) if end is not None else None
            if node is not None:
                calls.add(_call_key(node))
    return calls


def _parameters(prompt: str, entry_point: str) -> list[str]:
    """The entry point's parameter names, read from the prompt's signature (empty if it does not parse)."""
    try:
        module = ast.parse(prompt)
    except _PARSE_ERRORS:
        return []
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return [a.arg for a in node.args.posonlyargs + node.args.args]
    return []


def _positional(call: ast.Call, parameters: list[str]) -> ast.Call:
    """``call`` with keyword arguments named like the parameters moved into their positions."""
    named = {k.arg: k.value for k in call.keywords}
    if not named or call.args or list(named) != parameters[: len(named)]:
        return call
    return ast.Call(call.func, [named[p] for p in parameters[: len(named)]], [])


def _parse_call(text: str) -> ast.Call | None:
    try:
        node = ast.parse(text, mode="eval").body
    except _PARSE_ERRORS:
        return None
    return node if isinstance(node, ast.Call) else None


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
