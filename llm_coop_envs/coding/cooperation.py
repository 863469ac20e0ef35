"""How main uses the helper's functions, read from the syntax tree of main's code.

Only a real use counts: the entry point, in code that can run, calls a helper function (or hands it
to a call: ``map(aux, xs)``, ``sorted(xs, key=aux)``) by a name that refers to the helper's
module-level function. A name does not when the scope it is read in binds it (a parameter, a local
assignment, a nested ``def`` or ``class``, an import, a loop or comprehension variable) or when main
declares it ``global`` anywhere. Code that cannot run does not count: statements after ``return``,
``raise``, ``break`` or ``continue``; the branch a constant condition never takes; the right side of
``False and ...``; a nested function or lambda that nothing calls or hands on. A local alias
(``f = aux``, then ``f(x)``) is the helper itself. Calls made through
main's own top-level functions that the entry point calls count. Main code that reaches the module's
namespace dynamically (``globals()``, ``vars()``, ``setattr``, ``exec``, ``eval``, ``sys.modules``,
``__dict__``) can rebind anything, so it earns no credit at all.

Nothing is executed: the facts are read from the tree. (A call in a loop over an empty list still
counts: that is a limit of reading code without running it.)
"""

from __future__ import annotations

import ast
import dataclasses
import unicodedata

_NOT_ANALYSED = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_DYNAMIC_NAMES = frozenset({"globals", "vars", "locals", "setattr", "delattr", "exec", "eval", "compile",
                            "__import__", "__builtins__", "importlib", "builtins"})
_DYNAMIC_ATTRIBUTES = frozenset({"modules", "__dict__", "__globals__", "__builtins__", "f_globals", "f_locals",
                                 "__code__", "__setattr__", "_getframe", "currentframe"})
_DYNAMIC_MODULES = frozenset({"importlib", "builtins", "inspect", "ctypes", "gc"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TERMINATORS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


@dataclasses.dataclass(frozen=True)
class HelperUse:
    calls_helper: bool = False
    """The entry point really uses a helper function (see the module docstring)."""
    thin_wrapper: bool = False
    """The entry point's body (docstring aside) is only ``return aux(...)``, or ``r = aux(...)``
    followed by ``return r``."""
    ignores_return: bool = False
    """Every use of a helper function is a bare call statement whose value is thrown away."""
    used: tuple[str, ...] = ()
    """The helper functions used, in order of first use."""


@dataclasses.dataclass(frozen=True)
class _Use:
    name: str
    discarded: bool
    position: tuple[int, int]


def analyse_helper_use(main_code: str, entry_point: str, helper_functions: tuple[str, ...]) -> HelperUse:
    """The facts above; all False when main's code does not parse or no helper function exists."""
    # Python reads identifiers in NFKC form (a fullwidth "ａｕｘ" is "aux"): a helper that main's
    # code does not name even in that form cannot be used, and the code need not be parsed.
    spelled = unicodedata.normalize("NFKC", main_code)
    names = frozenset(name for name in helper_functions if name in spelled)
    if not names:
        return HelperUse()
    try:
        module = ast.parse(main_code)
    except _NOT_ANALYSED:
        return HelperUse()
    if _reaches_namespace(module) or _declares_global(module, names):
        return HelperUse()
    functions = {n.name: n for n in module.body if isinstance(n, _FUNCTIONS)}  # the last definition wins
    entry = functions.get(entry_point)
    if entry is None or names & functions.keys():
        return HelperUse()
    try:
        uses = _Walker(names - _bound_at_top(module), functions).function_uses(entry)
    except RecursionError:
        return HelperUse()
    if not uses:
        return HelperUse()
    uses.sort(key=lambda use: use.position)
    return HelperUse(
        calls_helper=True,
        thin_wrapper=_is_thin_wrapper(entry, names),
        ignores_return=all(use.discarded for use in uses),
        used=tuple(dict.fromkeys(use.name for use in uses)),
    )


class _Walker:
    """Collects the helper uses of reachable code, following calls into main's own functions."""

    def __init__(self, names: frozenset[str], functions: dict[str, ast.AST]) -> None:
        self.names, self.functions = names, functions
        self.entered: set[int] = set()

    def function_uses(self, function: ast.AST, visible: frozenset[str] | None = None) -> list[_Use]:
        if id(function) in self.entered:
            return []
        self.entered.add(id(function))
        visible = (self.names if visible is None else visible) - _bound_in(function)
        if isinstance(function, ast.Lambda):
            return self.expression_uses(function.body, visible, {})
        return self.block_uses(function.body, visible, {})

    def block_uses(self, body: list[ast.stmt], visible: frozenset[str], local_functions: dict) -> list[_Use]:
        uses: list[_Use] = []
        for statement in body:
            if isinstance(statement, _FUNCTIONS):
                local_functions[statement.name] = statement  # runs only when called
            elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda) and all(
                    isinstance(t, ast.Name) for t in statement.targets):
                local_functions.update((t.id, statement.value) for t in statement.targets)
            elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) and (
                    statement.value.id in visible and all(isinstance(t, ast.Name) for t in statement.targets)):
                local_functions.update((t.id, statement.value.id) for t in statement.targets)  # f = aux
            elif not isinstance(statement, ast.ClassDef):
                uses += self.statement_uses(statement, visible, local_functions)
            if isinstance(statement, _TERMINATORS):
                break  # what follows never runs
        return uses

    def statement_uses(self, statement: ast.stmt, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        if isinstance(statement, (ast.If, ast.While)) and isinstance(statement.test, ast.Constant):
            taken = statement.body if statement.test.value else statement.orelse
            return self.block_uses(taken, visible, local_functions)
        if isinstance(statement, ast.Expr) and _is_call_of(statement.value, visible):
            arguments = self.call_argument_uses(statement.value, visible, local_functions)
            return [_Use(statement.value.func.id, True, _position(statement.value)), *arguments]
        uses: list[_Use] = []
        for field, value in ast.iter_fields(statement):
            if field in ("body", "orelse", "finalbody") and isinstance(value, list):
                uses += self.block_uses(value, visible, local_functions)
            elif field == "handlers":
                uses += [u for handler in value for u in self.block_uses(handler.body, visible, local_functions)]
            elif field == "cases":
                uses += [u for case in value for u in self.block_uses(case.body, visible, local_functions)]
            else:
                for node in value if isinstance(value, list) else [value]:
                    if isinstance(node, ast.expr):
                        uses += self.expression_uses(node, visible, local_functions)
                    elif isinstance(node, ast.withitem):
                        uses += self.expression_uses(node.context_expr, visible, local_functions)
        return uses

    def expression_uses(self, node: ast.expr, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        if isinstance(node, ast.BoolOp):
            return self.bool_uses(node, visible, local_functions)
        if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Constant):
            return self.expression_uses(node.body if node.test.value else node.orelse, visible, local_functions)
        if isinstance(node, ast.Lambda):
            return []  # counts only when called or handed to a call (below)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension_uses(node, visible, local_functions)
        if isinstance(node, ast.Call):
            return self.call_uses(node, visible, local_functions)
        uses: list[_Use] = []
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                uses += self.expression_uses(child, visible, local_functions)
        return uses

    def bool_uses(self, node: ast.BoolOp, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        uses: list[_Use] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                stops = not value.value if isinstance(node.op, ast.And) else bool(value.value)
                if stops:
                    break  # short-circuit: the operands after it never run
            uses += self.expression_uses(value, visible, local_functions)
        return uses

    def comprehension_uses(self, node: ast.expr, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        inner = visible - _bound_in(node)
        uses: list[_Use] = []
        for generator in node.generators:
            uses += self.expression_uses(generator.iter, visible, local_functions)
            for condition in generator.ifs:
                uses += self.expression_uses(condition, inner, local_functions)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            uses += self.expression_uses(part, inner, local_functions)
        return uses

    def call_uses(self, call: ast.Call, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        uses: list[_Use] = []
        function = call.func
        if _is_call_of(call, visible):
            uses.append(_Use(function.id, False, _position(call)))
        elif isinstance(function, ast.Name) and function.id in local_functions:
            uses += self.local_uses(local_functions[function.id], visible, call)
        elif isinstance(function, ast.Name) and function.id in self.functions:
            uses += self.function_uses(self.functions[function.id])  # main's own top-level function
        elif isinstance(function, ast.Lambda):
            uses += self.function_uses(function, visible)
        else:
            uses += self.expression_uses(function, visible, local_functions)
        return uses + self.call_argument_uses(call, visible, local_functions)

    def local_uses(self, local: ast.AST | str, visible: frozenset[str], where: ast.AST) -> list[_Use]:
        """A local function or lambda runs when called or handed on; a local alias of a helper is the helper."""
        if isinstance(local, str):
            return [_Use(local, False, _position(where))]
        return self.function_uses(local, visible)

    def call_argument_uses(self, call: ast.Call, visible: frozenset[str], local_functions: dict) -> list[_Use]:
        uses: list[_Use] = []
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            value = argument.value if isinstance(argument, ast.Starred) else argument
            if isinstance(value, ast.Name) and value.id in visible:
                uses.append(_Use(value.id, False, _position(value)))  # handed on: map(aux, xs), key=aux
            elif isinstance(value, ast.Lambda):
                uses += self.function_uses(value, visible)
            elif isinstance(value, ast.Name) and value.id in local_functions:
                uses += self.local_uses(local_functions[value.id], visible, value)
            else:
                uses += self.expression_uses(value, visible, local_functions)
        return uses


def _is_call_of(node: ast.AST, names: frozenset[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _bound_in(scope: ast.AST) -> frozenset[str]:
    """Names a scope binds itself: parameters and every name stored in its own body (not nested scopes)."""
    bound: set[str] = set()
    arguments = getattr(scope, "args", None)
    if isinstance(arguments, ast.arguments):
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        bound |= {a.arg for a in every if a is not None}
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        pending = [g.target for g in scope.generators]
    elif isinstance(scope, ast.Lambda):
        pending = [scope.body]
    else:
        pending = list(getattr(scope, "body", []))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            pending.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)  # a walrus binds in the enclosing function, even from a comprehension
        if isinstance(node, ast.Lambda) or (isinstance(node, _SCOPES) and node is not scope):
            pending.extend(n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            continue
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(bound)


def _bound_at_top(module: ast.Module) -> frozenset[str]:
    """Names main's top level binds other than its functions (``aux = ...``, ``class aux``, imports):
    the program drops such statements when they rebind a helper's name; this is the second guard."""
    statements = [s for s in module.body if not isinstance(s, _FUNCTIONS)]
    return _bound_in(ast.Module(body=statements, type_ignores=[]))


def _reaches_namespace(module: ast.Module) -> bool:
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_ATTRIBUTES:
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _DYNAMIC_MODULES:
            return True
        if isinstance(node, ast.alias) and (node.name.split(".")[0] in _DYNAMIC_MODULES
                                            or node.name in _DYNAMIC_NAMES | _DYNAMIC_ATTRIBUTES):
            return True
    return False


def _declares_global(module: ast.Module, names: frozenset[str]) -> bool:
    return any(isinstance(node, (ast.Global, ast.Nonlocal)) and set(node.names) & names for node in ast.walk(module))


def _is_thin_wrapper(function: ast.AST, names: frozenset[str]) -> bool:
    body = [s for s in function.body if not _is_docstring_or_pass(s)]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        return _is_call_of(body[0].value, names)
    if len(body) == 2 and isinstance(body[0], ast.Assign) and isinstance(body[1], ast.Return):
        target, returned = body[0].targets, body[1].value
        same_name = (
            len(target) == 1 and isinstance(target[0], ast.Name)
            and isinstance(returned, ast.Name) and returned.id == target[0].id
        )
        return same_name and _is_call_of(body[0].value, names)
    return False


def _is_docstring_or_pass(statement: ast.stmt) -> bool:
    is_string = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    return is_string or isinstance(statement, ast.Pass)
