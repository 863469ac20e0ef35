"""Test snippets parsed and compiled once, on the host, for every run that uses them.

A test suite is the same for every sibling sample of a problem (and for every step on it), so the
host compiles each snippet once (cached by its text and position) and sends the code with the
tests, in the frame only the judge reads; the judge then unmarshals instead of parsing and
compiling per run. The code is the host's, so it is as trusted as the test text; the judge uses it
only when the interpreter's bytecode magic matches its own, else compiles from the text as before.

Imported by the host (as llm_coop_envs.sandbox.inside._compiled) and by the judge (as a top-level
module), so it uses only the standard library.
"""

from __future__ import annotations

import ast
import base64
import functools
import importlib.util
import marshal

MAGIC = importlib.util.MAGIC_NUMBER.hex()


def free_names(tree: ast.AST) -> set[str]:
    """Names the snippet reads but never binds itself (an over-approximation of its inputs)."""
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound


_CONDITIONAL = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


def literal_call(tree: ast.Module) -> tuple[tuple, dict] | None:
    """(args, kwargs) when the snippet makes exactly one call of `candidate`, with literal
    arguments, evaluated once and unconditionally by its last statement, an `assert` (as
    `assert candidate(1, [2]) == 3`): the judge may then send that call ahead, in one batch with
    its neighbours' (_judge.py). None for any other snippet."""
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "candidate"]
    if len(uses) != 1 or not tree.body or not isinstance(tree.body[-1], ast.Assert):
        return None
    path = _path_to(tree.body[-1].test, uses[0])
    if path is None or len(path) < 2 or not isinstance(path[-2], ast.Call) \
            or path[-2].func is not uses[0] or any(isinstance(n, _CONDITIONAL) for n in path):
        return None
    call = path[-2]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    try:
        return (tuple(ast.literal_eval(a) for a in call.args),
                {k.arg: ast.literal_eval(k.value) for k in call.keywords})
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """The nodes from root down to target (both included), or None when target is not below."""
    if root is target:
        return [root]
    for child in ast.iter_child_nodes(root):
        below = _path_to(child, target)
        if below is not None:
            return [root, *below]
    return None


def compile_test(index: int, source: str) -> tuple[object, set[str]]:
    """The snippet's code object and free names; raises what parsing or compiling raises."""
    tree = ast.parse(source)
    return compile(tree, f"<test {index}>", "exec"), free_names(tree)


@functools.lru_cache(maxsize=4096)
def packed(index: int, source: str) -> list | None:
    """[marshalled code, sorted free names, marshalled literal call or None] for a JSON frame
    (marshalled: as base64 text); None when the snippet does not compile (the judge then
    compiles it itself and reports the error)."""
    try:
        tree = ast.parse(source)
        code, names = compile(tree, f"<test {index}>", "exec"), free_names(tree)
        call = literal_call(tree)
        call_blob = None if call is None else _text(marshal.dumps(call))
    except BaseException:  # a syntax error, or a literal marshal cannot hold
        return None
    return [_text(marshal.dumps(code)), sorted(names), call_blob]


def _text(blob: bytes) -> str:
    return base64.b64encode(blob).decode("ascii")


def pack_suite(tests: list[str]) -> dict:
    return {"magic": MAGIC, "tests": [packed(i, source) for i, source in enumerate(tests)]}


def unpack(suite: object, index: int) -> tuple[object, set[str]] | None:
    """The judge's side: test `index`'s code and names from a packed suite, or None (compile
    from the text) when there is none or it was made by another interpreter version."""
    if not isinstance(suite, dict) or suite.get("magic") != MAGIC:
        return None
    tests = suite.get("tests")
    if not isinstance(tests, list) or index >= len(tests) or not isinstance(tests[index], list):
        return None
    blob, names = tests[index][:2]
    return marshal.loads(base64.b64decode(blob)), set(names)


def unpack_call(suite: object, index: int) -> tuple[tuple, dict] | None:
    """The judge's side: test `index`'s literal call (literal_call), if the host found one."""
    if not isinstance(suite, dict) or suite.get("magic") != MAGIC:
        return None
    tests = suite.get("tests")
    if not isinstance(tests, list) or index >= len(tests) or not isinstance(tests[index], list) \
            or len(tests[index]) < 3 or tests[index][2] is None:
        return None
    return marshal.loads(base64.b64decode(tests[index][2]))
