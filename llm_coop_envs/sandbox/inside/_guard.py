"""Rewrite test snippets so that untrusted objects cannot decide their own comparisons.

`assert candidate(x) == y` trusts `type(candidate(x)).__eq__`; a program can return an object whose
`__eq__` always says True (or whose `__bool__`, `__contains__`, `__lt__` lie). Inside every
`assert`, each operand of a comparison, of `not`, of `and`/`or`, and the asserted value itself are
wrapped in PLAIN_CHECK, which lets a value through only if it is plain builtin data (exact types
None/bool/int/float/complex/str/bytes and list/tuple/dict/set/frozenset of those). Anything else
fails the assert with an AssertionError subclass, so the test is reported "failed".

Used only for snippets the trusted judge cannot split into calls and checks (their call arguments
are not plain data), which then run inside the child (_judge.py, "fallback"). The judge does the
rewrite and compiles it, so no untrusted code can interfere with it. Standard library only: the
warm interpreter imports this file as a top-level module.
"""

from __future__ import annotations

import ast

from _plain import NAME as PLAIN_CHECK


def _wrap(node: ast.expr) -> ast.expr:
    call = ast.Call(func=ast.Name(id=PLAIN_CHECK, ctx=ast.Load()), args=[node], keywords=[])
    return ast.copy_location(call, node)


class _GuardValues(ast.NodeTransformer):
    """Wraps the operands that Python would ask an object to judge (==, <, in, not, bool)."""

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        node.left = _wrap(node.left)
        node.comparators = [_wrap(c) for c in node.comparators]
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        node.values = [_wrap(v) for v in node.values]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = _wrap(node.operand)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
        return node  # code inside a lambda runs later, outside the assert


class _GuardAsserts(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        node.test = _wrap(_GuardValues().visit(node.test))
        return node


def guard_tree(source: str) -> ast.Module | None:
    """The snippet's syntax tree with its asserts guarded; None when it does not parse (it then
    fails at compile time with its own error)."""
    try:
        tree = ast.parse(source)
        return ast.fix_missing_locations(_GuardAsserts().visit(tree))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def guard_test(source: str) -> str:
    """guard_tree as source text (for reading what the sandbox runs)."""
    tree = guard_tree(source)
    return source if tree is None else ast.unparse(tree)
