"""Split a dataset's ``check(candidate)`` function into separately scored test snippets.

HumanEval-style rows carry their tests as one function, ``def check(candidate): ...``. Scoring
each assert on its own gives a graded reward, so the function is split with the syntax tree:

* every top-level statement of ``check``'s body that contains an ``assert`` is one test
  (a ``for`` loop full of asserts is one test);
* ``assert <constant>`` (HumanEval's ``assert True, "..."`` markers) tests nothing and is dropped;
* every other statement is setup: each test snippet starts with the setup statements that precede
  it, so it runs on its own (the sandbox runs snippets one after another in a namespace where
  ``candidate`` is the entry point);
* module-level statements of the test source other than ``check`` (``METADATA = {}``, helper
  functions) are setup for every test.

Each snippet first seeds ``random`` with 0: some checks draw random inputs, and the same replies
must always earn the same reward. A test source that cannot be split (no ``check``, no assert)
becomes a single test that calls ``check(candidate)``.
"""

from __future__ import annotations

import ast
import dataclasses

SEED_LINE = "import random as _coop_random\n_coop_random.seed(0)\ndel _coop_random\n"


@dataclasses.dataclass(frozen=True)
class TestCase:
    """One scored test: ``source`` runs on its own; ``label`` is the assert shown in feedback."""

    __test__ = False  # not a pytest class

    source: str
    label: str


def split_check(test_source: str, check_name: str = "check") -> tuple[TestCase, ...]:
    """The test snippets of ``test_source`` (see the module docstring)."""
    try:
        module = ast.parse(test_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _whole_check(test_source, check_name)
    check = next(
        (n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == check_name), None
    )
    if check is None:
        return _whole_check(test_source, check_name)
    module_setup = [n for n in module.body if n is not check]
    parameter = check.args.args[0].arg if check.args.args else "candidate"
    tests = _split_body(check.body, module_setup, parameter)
    return tests or _whole_check(test_source, check_name)


def _split_body(body: list[ast.stmt], module_setup: list[ast.stmt], parameter: str) -> tuple[TestCase, ...]:
    setup: list[ast.stmt] = list(module_setup)
    if parameter != "candidate":  # the sandbox binds `candidate`; keep the check's own name working
        setup.append(ast.parse(f"{parameter} = candidate").body[0])
    tests = []
    for statement in body:
        if not _contains_assert(statement):
            setup.append(statement)
        elif not _is_constant_assert(statement):
            tests.append(_test_case(setup, statement))
    return tuple(tests)


def _test_case(setup: list[ast.stmt], statement: ast.stmt) -> TestCase:
    code = "\n".join(ast.unparse(s) for s in [*setup, statement])
    return TestCase(source=SEED_LINE + code + "\n", label=ast.unparse(statement))


def _contains_assert(statement: ast.stmt) -> bool:
    return any(isinstance(node, ast.Assert) for node in ast.walk(statement))


def _is_constant_assert(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Constant)


def _whole_check(test_source: str, check_name: str) -> tuple[TestCase, ...]:
    source = SEED_LINE + test_source + f"\n{check_name}(candidate)\n"
    return (TestCase(source=source, label=f"{check_name}(candidate)"),)
