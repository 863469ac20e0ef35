"""Turn a family's :class:`~.draft.Draft` into a suite row: run the references, render the texts.

The references are our own code, so they run here, in-process, to compute every expected value
(differential testing: no assert compares a program with itself). A draft is rejected when its
tests could be passed without doing the task: every hidden test must be a call unlike the public
examples, and the hidden expected values must differ from each other and from the first argument,
so a constant, the identity or a table of the public examples fails at least one of them.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import textwrap
from typing import Any

from llm_coop_envs.coding.procedural.draft import Draft, Rejected
from llm_coop_envs.coding.procedural.draw_checks import MIN_ALTERNATIVES, check_draw, fact_agreement
from llm_coop_envs.coding.suite import render_check

SUITE = "coop_procedural"
MIN_HIDDEN = 5
MAX_HIDDEN = 8
PUBLIC_POOL = 5
MAX_SOURCE_CHARS = 400  # a rough stand-in for 128 tokens of the default model's tokenizer


def build_row(draft: Draft, family: str, level: int, split: str, checks: bool = False) -> dict[str, Any]:
    """The HumanEval-style row of ``draft`` with the suite's fields; raises Rejected when unsound
    (``checks``: also by the v1 draw checks of :mod:`.draw_checks`)."""
    for source in (draft.reference_helper, draft.reference_main):
        if len(source) > MAX_SOURCE_CHARS:
            raise Rejected(f"a reference is longer than {MAX_SOURCE_CHARS} characters")
    tests = _tests(draft)
    public, rest = _public_keeping_the_fact(draft, family, level, tests) if checks else _public_first(
        tests, draft.public_count)
    hidden = _hidden(rest, public)
    _check_not_guessable(hidden, draft.compare)
    if checks:
        check_draw(draft, family, level, public, hidden)
    prompt = _prompt(draft, public)
    test, public_test = render_check(hidden), render_check(public)
    row = {
        "prompt": prompt, "entry_point": draft.entry_point,
        "helper": {"signature": draft.helper_signature, "doc": draft.helper_doc},
        "helper_fact": draft.helper_fact,
        "reference_helper": draft.reference_helper, "reference_main": draft.reference_main,
        "family": family, "level": level, "split": split,
        "public_test": public_test, "test": test, "public_tests": public, "tests": hidden,
    }
    return {"task_id": f"{SUITE}/{family}/L{level}/{content_hash(row)[:8]}", **row}


def content_hash(row: dict[str, Any]) -> str:
    """sha256 of what the agents see and what scores them (stable across processes, unlike hash())."""
    keys = ("prompt", "helper", "helper_fact", "public_test", "test")
    return sha256_text(json.dumps({k: row[k] for k in keys}, sort_keys=True))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_reference(draft: Draft) -> Any:
    """Main's reference function with the reference ``aux`` defined beside it."""
    namespace: dict[str, Any] = {}
    exec(compile(draft.reference_helper + "\n" + draft.reference_main, f"<{draft.entry_point}>", "exec"), namespace)
    return namespace[draft.entry_point]


def _tests(draft: Draft) -> list[dict[str, Any]]:
    main = run_reference(draft)
    tests = []
    for args in draft.inputs:
        expected = main(*copy.deepcopy(args))
        test = {"args": list(args), "expected": expected}
        if draft.compare == "isclose":
            test["compare"] = "isclose"
        tests.append(test)
    return tests


def _public_first(tests: list[dict[str, Any]], count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The public examples are the shortest of the first few non-empty calls: short examples read
    best in a docstring, lists of two or more show the work, and the edge cases a family adds later stay hidden."""
    shown = [t for t in tests[:PUBLIC_POOL] if all(_shows_work(a) for a in t["args"])]
    public = sorted(shown, key=lambda t: len(repr(t["args"])))[:count]
    return public, [t for t in tests if not any(t is p for p in public)]


def _public_keeping_the_fact(draft: Draft, family: str, level: int, tests: list[dict[str, Any]]
                             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """v1's public examples: the shortest choice among the first few calls that show the work and
    leave at least ``MIN_ALTERNATIVES`` of the family's alternatives for a helper-only fact
    (:mod:`.draw_checks`); failing that, the shortest such choice among all calls (an example that
    shows only the format, such as an empty list, rather than one that gives the fact away)."""
    agreement = fact_agreement(draft, family, level, tests)
    working = [i for i, t in enumerate(tests[:PUBLIC_POOL]) if all(_shows_work(a) for a in t["args"])]
    for pool in (working, range(len(tests))):
        choices = sorted(itertools.combinations(pool, min(draft.public_count, len(pool))),
                         key=lambda c: sum(len(repr(tests[i]["args"])) for i in c))
        for choice in choices:
            if choice and agreement.left(choice) >= MIN_ALTERNATIVES:
                public = sorted((tests[i] for i in choice), key=lambda t: len(repr(t["args"])))
                return public, [t for i, t in enumerate(tests) if i not in choice]
    raise Rejected("every choice of public examples gives the helper-only fact away")


def _shows_work(value: Any) -> bool:
    # A list of one item hardly shows what main does with a list.
    return not isinstance(value, list) or len(value) >= 2


def _hidden(candidates: list[dict[str, Any]], public: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {repr(t["args"]) for t in public}
    hidden = []
    for test in candidates:
        if repr(test["args"]) not in seen:
            seen.add(repr(test["args"]))
            hidden.append(test)
    if len(hidden) < MIN_HIDDEN:
        raise Rejected("fewer than 5 hidden tests unlike the public examples")
    return hidden[:MAX_HIDDEN]


def _check_not_guessable(hidden: list[dict[str, Any]], compare: str) -> None:
    expected = [t["expected"] for t in hidden]
    if len({_key(value, compare) for value in expected}) < 2:
        raise Rejected("a constant would pass every hidden test")
    if all(t["args"] and _same(t["args"][0], t["expected"], compare) for t in hidden):
        raise Rejected("the identity would pass every hidden test")


def _key(value: Any, compare: str) -> str:
    return repr(round(value, 6)) if compare == "isclose" else repr(value)


def _same(a: Any, b: Any, compare: str) -> bool:
    if compare == "isclose" and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def _prompt(draft: Draft, public: list[dict[str, Any]]) -> str:
    # Each line of the summary is wrapped on its own: the cooperative level gives its stated expression a
    # line of its own, so that main reads (and copies) it whole.
    body = [*(line for part in draft.summary.split("\n") for line in textwrap.wrap(part, 88)), ""]
    for test in public:
        body.append(f">>> {draft.entry_point}({', '.join(repr(a) for a in test['args'])})")
        body.append(repr(test["expected"]))
    doc = textwrap.indent("\n".join(body), "    ").replace("    \n", "\n")
    return f'def {draft.entry_point}({draft.params}):\n    """{doc.lstrip()}\n    """\n'
