"""Test snippets parsed and compiled once, on the host, for every run that uses them.

A test suite is the same for every sibling sample of a problem (and for every step on it), so the
host compiles each snippet once (cached by its text and position) and sends the code with the
tests, in the frame only the judge reads; the judge then unmarshals instead of parsing and
compiling per run. The code is the host's, so it is as trusted as the test text; the judge uses it
only when the interpreter's bytecode magic matches its own, else compiles from the text as before.

Imported by the host (as llm_coop_envs.sandbox._compiled) and by the judge (as a top-level
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


def compile_test(index: int, source: str) -> tuple[object, set[str]]:
    """The snippet's code object and free names; raises what parsing or compiling raises."""
    tree = ast.parse(source)
    return compile(tree, f"<test {index}>", "exec"), free_names(tree)


@functools.lru_cache(maxsize=4096)
def packed(index: int, source: str) -> list | None:
    """[marshalled code as base64 text, sorted free names] for a JSON frame; None when the
    snippet does not compile (the judge then compiles it itself and reports the error)."""
    try:
        code, names = compile_test(index, source)
    except BaseException:
        return None
    return [base64.b64encode(marshal.dumps(code)).decode("ascii"), sorted(names)]


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
    blob, names = tests[index]
    return marshal.loads(base64.b64decode(blob)), set(names)
