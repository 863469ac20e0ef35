"""Problem suites written as data: read, check and turn into HumanEval-style rows.

A suite is a folder of ``tier<N>.json`` files, each a JSON list of problems (the format is
described in the ``coop_basics-v0`` docs). Tests are data -- positional arguments, the expected
value and an optional comparison -- and :func:`render_check` turns them into the
``def check(candidate):`` source that the coding tasks already split into one scored test per assert.
Every fault in a file raises a :class:`SuiteError` that names the file, the problem and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

SPLIT_NAMES = ("train", "test")
COMPARES = ("eq", "isclose")
MIN_TESTS = 5
HELPER_SIGNATURE = re.compile(r"def aux\(.*\):")
TIER_FILE = re.compile(r"tier(\d+)\.json")
ISCLOSE = "rel_tol=1e-6, abs_tol=1e-9"

Row = dict[str, Any]


class SuiteError(ValueError):
    """A suite file breaks the format; the message says where and how."""


def packaged_suite_dir(name: str) -> Path:
    """The folder of a suite shipped inside the package (``llm_coop_envs/coding/suites/<name>``)."""
    return Path(str(resources.files("llm_coop_envs.coding") / "suites" / name))


def load_suite(folder: str | Path) -> list[Row]:
    """Every problem of every ``tier<N>.json`` in ``folder``, by tier then file order, checked."""
    folder = Path(folder)
    files = sorted(
        (int(m.group(1)), path) for path in folder.glob("tier*.json") if (m := TIER_FILE.fullmatch(path.name))
    )
    if not files:
        raise SuiteError(f"No tier<N>.json files in {str(folder)!r}.")
    problems = []
    for tier, path in files:
        problems.extend(_read_tier(path, tier))
    _check_unique(problems)
    return problems


def _read_tier(path: Path, tier: int) -> list[Row]:
    try:
        problems = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SuiteError(f"{path.name} is not valid UTF-8 JSON: {error}") from None
    if not isinstance(problems, list):
        raise SuiteError(f"{path.name} must hold a JSON list of problems.")
    for position, problem in enumerate(problems):
        _check_problem(problem, tier, f"{path.name}, problem {position}")
    return problems


def _check_problem(problem: Any, tier: int, where: str) -> None:
    if not isinstance(problem, dict):
        raise SuiteError(f"{where}: a problem must be a JSON object.")
    for field in ("task_id", "split", "entry_point", "prompt", "reference_helper", "reference_main"):
        if not isinstance(problem.get(field), str) or not problem[field].strip():
            raise SuiteError(f"{where}: field {field!r} must be a non-empty string.")
    where = f"{where} ({problem['task_id']})"
    entry = problem["entry_point"]
    if problem.get("tier") != tier:
        raise SuiteError(f"{where}: 'tier' must be {tier}, the number in its file name.")
    if not re.fullmatch(rf"coop_basics/t{tier}/[a-z0-9_]+", problem["task_id"]):
        raise SuiteError(f"{where}: 'task_id' must look like 'coop_basics/t{tier}/<snake_slug>'.")
    if problem["split"] not in SPLIT_NAMES:
        raise SuiteError(f"{where}: 'split' must be one of {SPLIT_NAMES}.")
    if not entry.isidentifier() or entry == "aux":
        raise SuiteError(f"{where}: 'entry_point' must be a Python name other than 'aux'.")
    if f"def {entry}(" not in problem["prompt"]:
        raise SuiteError(f"{where}: the prompt must define {entry!r}.")
    _check_helper(problem.get("helper"), where)
    _check_tests(problem.get("tests"), where)


def _check_helper(helper: Any, where: str) -> None:
    fields_ok = isinstance(helper, dict) and all(isinstance(helper.get(k), str) for k in ("signature", "doc"))
    if not fields_ok or not HELPER_SIGNATURE.fullmatch(helper["signature"]) or not helper["doc"].strip():
        raise SuiteError(f"{where}: 'helper' must be {{'signature': 'def aux(...):', 'doc': '<one sentence>'}}.")


def _check_tests(tests: Any, where: str) -> None:
    if not isinstance(tests, list) or len(tests) < MIN_TESTS:
        raise SuiteError(f"{where}: 'tests' must be a list of at least {MIN_TESTS} tests.")
    for number, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("args"), list) or "expected" not in test:
            raise SuiteError(f"{where}, test {number}: a test is {{'args': [...], 'expected': ...}}.")
        if not isinstance(test.get("public", False), bool):
            raise SuiteError(f"{where}, test {number}: 'public' must be true or false.")
        compare = test.get("compare", "eq")
        if compare not in COMPARES:
            raise SuiteError(f"{where}, test {number}: 'compare' must be one of {COMPARES}.")
        if compare == "isclose" and not _is_number(test["expected"]):
            raise SuiteError(f"{where}, test {number}: 'isclose' needs a number as 'expected'.")
        if not _is_plain(test["args"]) or not _is_plain(test["expected"]):
            raise SuiteError(f"{where}, test {number}: values must be finite JSON values.")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_plain(value: Any) -> bool:
    # json.loads accepts NaN and Infinity, which have no exact repr to assert against.
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, str))


def _check_unique(problems: Sequence[Row]) -> None:
    for field in ("task_id", "entry_point", "prompt"):
        seen: dict[str, str] = {}
        for problem in problems:
            key = problem[field]
            if key in seen:
                raise SuiteError(f"{problem['task_id']} and {seen[key]} share the same {field!r}.")
            seen[key] = problem["task_id"]


def render_check(tests: Iterable[Mapping[str, Any]]) -> str:
    """The ``check(candidate)`` source of data tests: one exact assert per test."""
    lines = ["import math", "", "", "def check(candidate):"]
    for test in tests:
        call = f"candidate({', '.join(repr(arg) for arg in test['args'])})"
        expected = repr(test["expected"])
        if test.get("compare", "eq") == "isclose":
            lines.append(f"    assert math.isclose({call}, {expected}, {ISCLOSE})")
        else:
            lines.append(f"    assert {call} == {expected}")
    return "\n".join(lines) + "\n"


def to_row(problem: Mapping[str, Any]) -> Row:
    """A HumanEval-style row (``task_id``, ``prompt``, ``test``, ``entry_point``) keeping every suite field;
    ``public_test`` holds the tests marked ``"public": true`` (shown in feedback; never scored under v1 rules)."""
    public = [test for test in problem["tests"] if test.get("public", False)]
    return {**problem, "test": render_check(problem["tests"]), "public_test": render_check(public) if public else None}
