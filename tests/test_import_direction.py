"""Imports point down: the env package ``llm_coop_envs`` imports neither ``trainers`` nor
``benchmarks``, ``trainers`` does not import ``benchmarks``, and no package imports another's private
names (a module or name that starts with one underscore).

Every ``.py`` file of the three packages is read with ``ast``: imports at module level and inside
functions, ``import x``, ``from x import y``, relative imports (resolved against the file's package)
and ``importlib.import_module`` / ``__import__`` called with a literal string.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("llm_coop_envs", "trainers", "benchmarks")
FORBIDDEN = {"llm_coop_envs": {"trainers", "benchmarks"}, "trainers": {"benchmarks"}}
"""What each package must not import: the packages above it."""


def _module_name(relative: Path) -> tuple[str, bool]:
    """The dotted module name of a file (relative to the repository) and whether it is a package."""
    parts = list(relative.with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if not level:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(tree: ast.AST, importer: str, is_package: bool):
    """``(line, module, name or None, text)`` for every import in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None, ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, importer, is_package)
            for alias in node.names:
                yield node.lineno, module, None if alias.name == "*" else alias.name, ast.unparse(node)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant) and isinstance(first.value, str):
                target = first.value
                if target.startswith("."):
                    dots = len(target) - len(target.lstrip("."))
                    target = _resolve(target[dots:] or None, dots, importer, is_package)
                yield node.lineno, target, None, ast.unparse(node)


def violations(source: str, relative_path: str) -> list[str]:
    """What is wrong with the imports of ``source``, the file at ``relative_path`` in the repository:
    one ``path:line: reason: import`` line each."""
    importer, is_package = _module_name(Path(relative_path))
    home = importer.split(".")[0]
    found = []
    imports = sorted(_imports(ast.parse(source, filename=relative_path), importer, is_package), key=lambda found: found[0])
    for line, module, name, text in imports:
        top = module.split(".")[0]
        if top in FORBIDDEN.get(home, ()):
            found.append(f"{relative_path}:{line}: {home} imports {top}: {text}")
        if top in PACKAGES and top != home:
            private = [part for part in [*module.split(".")[1:], name or ""] if _is_private(part)]
            if private:
                found.append(f"{relative_path}:{line}: private {', '.join(private)} of {top} imported from {home}: {text}")
    return found


def test_the_checker_finds_each_kind_of_wrong_import():
    bad = """
import os
from __future__ import annotations
from llm_coop_envs import __version__

def later():
    from trainers.config import Config
    import benchmarks.cli
    return importlib.import_module("trainers.policy"), __import__("benchmarks")

from llm_coop_envs.data.hub import offline_reason
from trainers.generation import _private_helper
import trainers._hidden.module
from ._same_package import fine
"""
    found = violations(bad, "llm_coop_envs/writing/example.py")
    assert [entry.split(": ", 1)[0] for entry in found] == [
        "llm_coop_envs/writing/example.py:7", "llm_coop_envs/writing/example.py:8",
        "llm_coop_envs/writing/example.py:9", "llm_coop_envs/writing/example.py:9",
        "llm_coop_envs/writing/example.py:12", "llm_coop_envs/writing/example.py:12",
        "llm_coop_envs/writing/example.py:13", "llm_coop_envs/writing/example.py:13",
    ], found
    assert "private _private_helper of trainers imported from llm_coop_envs" in found[5]
    assert "private _hidden of trainers" in found[7]
    # trainers may import the env package's public names, but not its private ones, nor benchmarks
    found = violations("from ..data import _rows\nfrom llm_coop_envs.data.hub import _probe\n"
                       "from llm_coop_envs.lm.cache import resolve_model\nimport benchmarks.records\n",
                       "trainers/generation/__init__.py")
    assert len(found) == 2 and ":2: private _probe" in found[0] and ":4: trainers imports benchmarks" in found[1], found
    assert _resolve("_rows", 2, "trainers.generation", True) == "trainers._rows"
    assert _resolve(None, 1, "trainers.generation.decode", False) == "trainers.generation"


def test_imports_point_down_and_stay_public():
    files = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))
    assert len(files) > 100  # the walk found the packages
    found = [entry for path in files
             for entry in violations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())]
    assert not found, "imports that point up or reach into another package's private names:\n" + "\n".join(found)
