"""CodingProblem: one dataset row, checked and prepared once (tests split, prompt context kept)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from llm_coop_envs.coding.parsing import parse_reply
from llm_coop_envs.coding.public_tests import split_public
from llm_coop_envs.coding.rules import RULES, ScoringRules
from llm_coop_envs.coding.tests_split import TestCase, split_check

REQUIRED_FIELDS = ("task_id", "prompt", "test", "entry_point")


@dataclasses.dataclass(frozen=True)
class CodingProblem:
    """A HumanEval-style problem: a prompt ending in the entry point's signature and docstring,
    and a ``check(candidate)`` test function."""

    task_id: str
    prompt: str
    entry_point: str
    tests: tuple[TestCase, ...]
    """The tests that score (under the ``v1`` rules the hidden ones; under ``v0`` every assert)."""
    context: str
    """Code from the prompt that the program needs: its imports and the other functions it defines
    (HumanEval/38's ``decode_cyclic`` calls the prompt's ``encode_cyclic``)."""
    row: Mapping[str, Any]
    """The dataset row as given (read-only), for user reward functions."""
    public_tests: tuple[TestCase, ...] = ()
    """Tests that feedback may quote and that never score (:mod:`llm_coop_envs.coding.public_tests`)."""

    @property
    def tests_to_run(self) -> tuple[TestCase, ...]:
        """What the sandbox runs: the scoring tests, then the public ones."""
        return self.tests + self.public_tests

    @classmethod
    def from_row(cls, row: Mapping[str, Any], position: int, rules: ScoringRules = RULES["v0"],
                 dataset: str = "") -> CodingProblem:
        missing = [f for f in REQUIRED_FIELDS if not isinstance(row.get(f), str) or not row.get(f)]
        if missing:
            raise ValueError(
                f"Problem {position} lacks the text field(s) {missing}. Each row needs 'task_id', 'prompt' "
                "(code ending with the function's signature and docstring), 'test' (a 'def check(candidate):' "
                "with asserts) and 'entry_point' (the function's name)."
            )
        if not row["entry_point"].isidentifier():
            raise ValueError(f"Problem {row['task_id']!r}: entry_point {row['entry_point']!r} is not a Python name.")
        _check_test_and_prompt(row, position)
        public_source = row.get("public_test") if isinstance(row.get("public_test"), str) else None
        split = (dataset, public_source, rules.example_free_hidden) if rules.hidden_tests else None
        public, tests, context = _prepare(row["prompt"], row["test"], row["entry_point"], split)
        return cls(
            task_id=row["task_id"],
            prompt=row["prompt"],
            entry_point=row["entry_point"],
            tests=tests,
            context=context,
            row=MappingProxyType(dict(row)),
            public_tests=public,
        )


def _check_test_and_prompt(row: Mapping[str, Any], position: int) -> None:
    """Reject a row whose agents could never pass: a broken test, or a prompt without the entry point."""
    name = f"Problem {row['task_id']!r} (row {position})"
    error = _syntax_error(row["test"])
    if error:
        raise ValueError(f"{name}: its 'test' is not valid Python: {error}.")
    defines = re.compile(rf"^(async[ \t]+)?def[ \t]+{re.escape(row['entry_point'])}[ \t]*\(", re.MULTILINE)
    if not defines.search(row["prompt"]):
        raise ValueError(
            f"{name}: its prompt does not define the entry point {row['entry_point']!r} "
            f"(expected a top-level 'def {row['entry_point']}(...)')."
        )


@functools.lru_cache(maxsize=4096)
def _syntax_error(code: str) -> str | None:
    try:
        compile(code, "<test>", "exec")
    except SyntaxError as error:
        return f"{error.msg} (line {error.lineno})"
    return None


@functools.lru_cache(maxsize=4096)
def _prepare(prompt: str, test: str, entry_point: str, split: tuple[str, str | None, bool] | None
             ) -> tuple[tuple[TestCase, ...], tuple[TestCase, ...], str]:
    """(public tests, scoring tests, context); ``split`` is (dataset, public source, whether written
    examples count) under hidden-test rules."""
    # Envs are made often (trainers, tests, evaluation scripts); split each problem once per process.
    tests = split_check(test)
    public = ()
    if split is not None:
        public, tests = split_public(tests, prompt, entry_point, split[1], split[0], split[2])
    return public, tests, prompt_context(prompt, entry_point)


def prompt_context(prompt: str, entry_point: str) -> str:
    """The prompt's top-level code other than the entry point's own (docstring-only) definition."""
    pieces = parse_reply(prompt).pieces
    kept = [p.source for p in pieces if p.kind != "broken" and p.name != entry_point]
    return "\n\n".join(kept)
