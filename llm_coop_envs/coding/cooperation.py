"""How main uses the helper's functions, read from the syntax tree of main's code."""

from __future__ import annotations

import ast
import dataclasses
import unicodedata

_NOT_ANALYSED = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


@dataclasses.dataclass(frozen=True)
class HelperUse:
    calls_helper: bool = False
    """main's code refers to a helper function (calls it, or passes it, e.g. ``key=aux``)."""
    thin_wrapper: bool = False
    """The entry point's body (docstring aside) is only ``return aux(...)``, or ``r = aux(...)``
    followed by ``return r``."""
    ignores_return: bool = False
    """Every call of a helper function in main is a bare statement whose value is thrown away."""
    used: tuple[str, ...] = ()
    """The helper functions main refers to, in order of first use."""


def analyse_helper_use(main_code: str, entry_point: str, helper_functions: tuple[str, ...]) -> HelperUse:
    """The facts above; all False when main's code does not parse or no helper function exists."""
    # Python reads identifiers in NFKC form (a fullwidth "ａｕｘ" is "aux"): a helper that main's
    # code does not name even in that form cannot be used, and the code need not be parsed.
    spelled = unicodedata.normalize("NFKC", main_code)
    names = {name for name in helper_functions if name in spelled}
    if not names:
        return HelperUse()
    try:
        module = ast.parse(main_code)
    except _NOT_ANALYSED:
        return HelperUse()
    references, discarded = _references(module, names)
    if not references:
        return HelperUse()
    used = tuple(dict.fromkeys(sorted((n.lineno, n.col_offset, n.id) for n in references)))
    return HelperUse(
        calls_helper=True,
        thin_wrapper=_is_thin_wrapper(module, entry_point, names),
        ignores_return=len(discarded) == len(references),
        used=tuple(dict.fromkeys(name for _, _, name in used)),
    )


def _references(module: ast.Module, names: set[str]) -> tuple[list[ast.Name], list[ast.Name]]:
    """In one walk: every mention of a helper name, and those whose call is an expression
    statement (``aux(x)`` on its own line, its value thrown away)."""
    references, discarded = [], []
    for node in ast.walk(module):
        if isinstance(node, ast.Name):
            if node.id in names:
                references.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            function = node.value.func
            if isinstance(function, ast.Name) and function.id in names:
                discarded.append(function)
    # A discarded call whose arguments mention a helper again still uses that inner value.
    return references, discarded


def _is_thin_wrapper(module: ast.Module, entry_point: str, names: set[str]) -> bool:
    function = next(
        (n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry_point),
        None,
    )
    if function is None:
        return False
    body = [s for s in function.body if not _is_docstring_or_pass(s)]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        return _is_helper_call(body[0].value, names)
    if len(body) == 2 and isinstance(body[0], ast.Assign) and isinstance(body[1], ast.Return):
        target, returned = body[0].targets, body[1].value
        same_name = (
            len(target) == 1 and isinstance(target[0], ast.Name)
            and isinstance(returned, ast.Name) and returned.id == target[0].id
        )
        return same_name and _is_helper_call(body[0].value, names)
    return False


def _is_docstring_or_pass(statement: ast.stmt) -> bool:
    is_string = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    return is_string or isinstance(statement, ast.Pass)


def _is_helper_call(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
