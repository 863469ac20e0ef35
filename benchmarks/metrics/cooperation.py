"""Cooperation between a helper and a main agent, read from the syntax trees of their code.

The helper writes auxiliary function(s); the main agent writes the entry-point function. The
joint reply *cooperates* when main calls one of the helper's functions and uses the value it
returns (a call whose value is thrown away does not count; a function that main redefines is
main's own, not the helper's). The *scheme* of a cooperating reply is the first that matches:

``fallback``
    main has its own implementation for when the helper fails: the call sits in a ``try`` whose
    handler computes the answer itself, or its result is checked for failure (``is None``,
    ``not r``, ``r or ...``) and the failure branch computes the answer itself.
``strategy_filter``
    the helper decides a branch of main's logic: its value is the condition of an ``if``,
    a conditional expression, a ``while`` or a comprehension filter.
``coordinator``
    main splits the work and delegates parts: the helper is called in a loop or comprehension,
    or several times with different arguments.
``thin_wrapper``
    main only forwards its arguments: the body is ``return helper(args)`` (arguments are plain
    names or constants), possibly through one variable.
``decorator``
    main adds edge cases or features around the helper's core logic: anything else that uses
    the helper's result (guards before the call, post-processing after it).
``none``
    no cooperation (or code that does not parse).

Pure functions of the code strings: nothing is executed.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence

SCHEMES = ("fallback", "decorator", "coordinator", "strategy_filter", "thin_wrapper", "none")

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


@dataclasses.dataclass(frozen=True)
class CooperationAnalysis:
    """What the syntax trees say about one joint reply."""

    helper_functions: tuple[str, ...]
    """Top-level functions the helper defines that main does not redefine."""
    calls_helper: bool
    """Main (its entry point or a function it calls) calls a helper function."""
    uses_result: bool
    """At least one such call's value is used (assigned, returned, tested, passed on)."""
    scheme: str
    error: str = ""
    """Why the code could not be analysed (a syntax error), if it could not."""

    @property
    def cooperates(self) -> bool:
        return self.calls_helper and self.uses_result


def analyze_cooperation(helper_code: str, main_code: str, entry_point: str | None = None) -> CooperationAnalysis:
    """Cooperation and scheme of one joint reply; ``entry_point`` names main's function (else guessed)."""
    helper_tree, helper_error = _parse(helper_code)
    main_tree, main_error = _parse(main_code)
    if main_tree is None:
        return CooperationAnalysis((), False, False, "none", error=f"main: {main_error}")
    main_functions = _top_level_functions(main_tree)
    helpers = tuple(n for n in _top_level_functions(helper_tree) if n not in main_functions) if helper_tree else ()
    if not helpers:
        return CooperationAnalysis((), False, False, "none", error=f"helper: {helper_error}" if helper_error else "")
    scope = _functions_in_scope(main_functions, entry_point, set(helpers))
    calls = [(fn, call) for fn in scope for call in _helper_calls(fn, set(helpers))]
    if not calls:
        return CooperationAnalysis(helpers, False, False, "none")
    used = [(fn, call) for fn, call in calls if _value_is_used(fn, call)]
    if not used:
        return CooperationAnalysis(helpers, True, False, "none")
    function = used[0][0]
    scheme = _classify(function, [call for fn, call in used if fn is function], set(helpers))
    return CooperationAnalysis(helpers, True, True, scheme)


def classify_scheme(helper_code: str, main_code: str, entry_point: str | None = None) -> str:
    """The cooperation scheme (one of :data:`SCHEMES`) of one joint reply."""
    return analyze_cooperation(helper_code, main_code, entry_point).scheme


def cooperation_rate(analyses: Iterable[CooperationAnalysis]) -> float | None:
    """The fraction of joint replies that cooperate; ``None`` when there are none."""
    flags = [a.cooperates for a in analyses]
    return sum(flags) / len(flags) if flags else None


def scheme_distribution(schemes: Iterable[str]) -> dict[str, float]:
    """The share of each scheme (every scheme listed, zeros included); empty input gives all zeros."""
    counted = list(schemes)
    return {s: (counted.count(s) / len(counted) if counted else 0.0) for s in SCHEMES}


# ----------------------------------------------------------------- parsing and scope
def _parse(code: str) -> tuple[ast.Module | None, str]:
    try:
        return ast.parse(code), ""
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return None, f"{type(error).__name__}: {error}"


def _top_level_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _functions_in_scope(functions: dict, entry_point: str | None, helpers: set[str]) -> list:
    """Main's entry function first, then the main functions it reaches through calls."""
    entry = _entry_function(functions, entry_point, helpers)
    if entry is None:
        return []
    seen, order = {entry.name}, [entry]
    for function in order:  # grows while iterating: a breadth-first walk of main's call graph
        for name in _called_names(function):
            if name in functions and name not in seen:
                seen.add(name)
                order.append(functions[name])
    return order


def _entry_function(functions: dict, entry_point: str | None, helpers: set[str]):
    if entry_point:
        return functions.get(entry_point)  # main must write the entry point; no guessing then
    calling = [f for f in functions.values() if _helper_calls(f, helpers)]
    if calling:
        return calling[-1]
    return list(functions.values())[-1] if functions else None


def _called_names(node: ast.AST) -> set[str]:
    return {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}


def _helper_calls(function: ast.AST, helpers: set[str]) -> list[ast.Call]:
    return [c for c in ast.walk(function) if _is_helper_call(c, helpers)]


def _is_helper_call(node: ast.AST, helpers: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers


def _parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(root) for child in ast.iter_child_nodes(parent)}


def _value_is_used(function: ast.AST, call: ast.Call) -> bool:
    return not isinstance(_parents(function).get(call), ast.Expr)


# ----------------------------------------------------------------- the schemes
def _classify(function: ast.AST, calls: Sequence[ast.Call], helpers: set[str]) -> str:
    parents = _parents(function)
    results = _result_names(function, helpers)
    if _has_fallback(function, calls, parents, results, helpers):
        return "fallback"
    if any(_decides_branch(call, parents) for call in calls) or _result_tested(function, results):
        return "strategy_filter"
    if any(_inside_loop(call, parents, function) for call in calls) or _distinct_call_count(calls) > 1:
        return "coordinator"
    if _is_thin_wrapper(function, results, helpers):
        return "thin_wrapper"
    return "decorator"


def _result_names(function: ast.AST, helpers: set[str]) -> set[str]:
    """Variables assigned straight from a helper call (``r = helper(x)``)."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _is_helper_call(node.value, helpers):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _has_fallback(function, calls, parents, results: set[str], helpers: set[str]) -> bool:
    return (
        any(_guarded_by_try(call, parents, function) for call in calls)
        or any(_failure_branch_computes(node, results, helpers, parents) for node in ast.walk(function) if isinstance(node, ast.If))
        or any(_or_alternative(node, helpers) for node in ast.walk(function) if isinstance(node, ast.BoolOp))
    )


def _guarded_by_try(call, parents, stop) -> bool:
    """The call is in a try body whose handler computes something itself."""
    node = call
    while node is not stop and node in parents:
        parent = parents[node]
        if isinstance(parent, ast.Try) and node in parent.body:
            return any(_computes(handler.body) for handler in parent.handlers)
        node = parent
    return False


def _failure_branch_computes(node: ast.If, results: set[str], helpers: set[str], parents) -> bool:
    """``if r is None: <own code>`` / ``if r is not None: return r`` followed by own code, and the like."""
    checked = _failure_check(node.test, results, helpers)
    if checked is None:
        return False
    if checked:
        return _computes(node.body)
    if isinstance(node.test, ast.Name) and not _mentions(node.body, node.test.id):
        return False  # ``if r: <code not using r>`` is a branch decision, not a success check
    if node.orelse:
        return _computes(node.orelse)
    if node.body and isinstance(node.body[-1], ast.Return):
        return _computes(_following_statements(node, parents))
    return False


def _failure_check(test: ast.expr, results: set[str], helpers: set[str]) -> bool | None:
    """True if ``test`` is true when the helper failed, False if true when it succeeded, None if no such check."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_result(test.operand, results, helpers):
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_result(test.left, results, helpers):
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            return isinstance(test.ops[0], (ast.Is, ast.Eq))
    if isinstance(test, ast.Name) and test.id in results:
        return False  # ``if r: return r`` then own code: truthiness as success (a plain call here is a filter)
    return None


def _mentions(statements: Sequence[ast.stmt], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for s in statements for n in ast.walk(s))


def _is_result(node: ast.expr, results: set[str], helpers: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in results) or _is_helper_call(node, helpers)


def _or_alternative(node: ast.BoolOp, helpers: set[str]) -> bool:
    """``helper(x) or <own computation>``."""
    return isinstance(node.op, ast.Or) and _is_helper_call(node.values[0], helpers) and _computes_expr(node.values[1:])


def _following_statements(node: ast.stmt, parents) -> list[ast.stmt]:
    parent = parents.get(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and node in block:
            return block[block.index(node) + 1 :]
    return []


def _computes(statements: Sequence[ast.stmt]) -> bool:
    """A block does real work: more than pass / raise / break / a constant or bare-name return."""
    for statement in statements:
        if isinstance(statement, (ast.Pass, ast.Raise, ast.Break, ast.Continue)):
            continue
        if isinstance(statement, ast.Return) and (statement.value is None or _trivial(statement.value)):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        return True
    return False


def _computes_expr(values: Sequence[ast.expr]) -> bool:
    return any(not _trivial(v) for v in values)


def _trivial(node: ast.expr) -> bool:
    return isinstance(node, (ast.Constant, ast.Name)) or (
        isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set)) and not any(True for _ in ast.iter_child_nodes(node))
    )


def _decides_branch(call: ast.Call, parents) -> bool:
    """The call's value is (part of) a condition: if/while test, conditional expression, comprehension filter."""
    node = call
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and node is parent.test:
            return True
        if isinstance(parent, ast.comprehension) and node in parent.ifs:
            return True
        if isinstance(parent, (ast.stmt, ast.Lambda, ast.comprehension)):
            return False
        node = parent
    return False


def _result_tested(function: ast.AST, results: set[str]) -> bool:
    """A helper result variable appears in the condition of an if/while/conditional expression."""
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            if any(isinstance(n, ast.Name) and n.id in results for n in ast.walk(node.test)):
                return True
    return False


def _inside_loop(call: ast.Call, parents, stop) -> bool:
    node = call
    while node is not stop and node in parents:
        node = parents[node]
        if isinstance(node, _LOOPS):
            return True
    return False


def _distinct_call_count(calls: Sequence[ast.Call]) -> int:
    return len({ast.dump(call) for call in calls})


def _is_thin_wrapper(function, results: set[str], helpers: set[str]) -> bool:
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        return _is_forwarding_call(body[0].value, helpers)
    if len(body) == 2 and isinstance(body[0], ast.Assign) and isinstance(body[1], ast.Return):
        returned = body[1].value
        return _is_forwarding_call(body[0].value, helpers) and isinstance(returned, ast.Name) and returned.id in results
    return False


def _is_forwarding_call(node: ast.expr | None, helpers: set[str]) -> bool:
    if not _is_helper_call(node, helpers):
        return False
    arguments = list(node.args) + [k.value for k in node.keywords]
    return all(isinstance(a, (ast.Name, ast.Constant)) or (isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)) for a in arguments)
