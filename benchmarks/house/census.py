"""The house census: how big each package is, and how many times the language-model code does one job.

    python -m benchmarks.house.census

prints a markdown table, one row per package (``llm_coop_envs``, ``trainers``, ``benchmarks``) and per
package inside them, then every place it counted, as ``path:line function``, so each number can be
checked by reading the code it names. Everything is read with ``tokenize`` and ``ast`` from the
``.py`` files under the three packages (tests and scripts are not read); nothing is imported or run.

The rules, all mechanical:

**Lines**: lines that hold code, i.e. any token but a comment; blank lines and comment-only lines do
not count (docstrings are code here: they are strings the module keeps).

**Decode paths**: the ways a decode step is computed.

* A call, inside a step loop (a ``while`` loop, or a ``for ... in range(...)`` loop whose bound names
  tokens, e.g. ``range(settings.max_new_tokens)``), that passes a KV cache: a keyword
  ``past_key_values``, ``cache``, ``kv_cache`` or ``past``, a ``**passing(...)``
  (:func:`llm_coop_envs.cache_api.passing` names the cache argument), or a positional argument named
  ``cache``, ``kv_cache`` or ``past_key_values``. Calls of the cache's own methods (on an object whose
  name contains ``cache``), of builtins (``zip``) and of ``passing`` itself do not count. Each such
  call site is one path: a decode loop that calls either the model's forward or a step that replaces
  it counts twice. Loops over a collection (layers, chunks of prompts, rows) and over anything but
  tokens are not step loops: a prefill in chunks or a forward over its layers is no decode path.
* A function of the project installed as a module's forward (``module.forward = f`` or
  ``module.forward = functools.partial(f, ...)``): every decode step that runs the module runs ``f``
  instead of the module's own arithmetic (per-row LoRA, packed weights). A module's own class forward
  with an argument fixed (``functools.partial(type(model).forward, ...)``) adds no arithmetic and does
  not count.

**Prefix sharing**: a function that gives one prompt's KV cache to several rows, i.e. one that, outside
any loop or comprehension, calls ``reorder_cache``, ``batch_select_indices``, ``batch_repeat_interleave``
or ``select`` on a cache (an object whose name contains ``cache``). Counted once per function. Sharing
happens once, before the rows run; the same calls inside a loop are a decode loop dropping its
finished rows, which is not sharing.

**Model loading**: a call of ``from_pretrained`` on a model class (``Auto...Model...``,
``...ForCausalLM``, ``...PeftModel...``; not tokenizers or configs). A function that also calls
``save_pretrained`` loads a checkpoint only to write it in another form: it is listed as a conversion
and not counted.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import sys
import tokenize
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("llm_coop_envs", "trainers", "benchmarks")
KINDS = ("decode path", "prefix sharing", "model loading")
"""What the table counts, in its column order; a ``conversion`` is listed but not counted."""
COLUMNS = ("decode paths", "prefix sharing", "model loading")

CACHE_KEYWORDS = {"past_key_values", "cache", "kv_cache", "past"}
CACHE_NAMES = {"cache", "kv_cache", "past_key_values"}
ROW_OPERATIONS = {"reorder_cache", "batch_select_indices", "batch_repeat_interleave", "select"}
MODEL_CLASS = re.compile(r"^(Auto\w*Model\w*|\w+ForCausalLM|\w*PeftModel\w*)$")
_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENCODING, tokenize.ENDMARKER}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
_BUILTINS = set(dir(builtins))


@dataclass(frozen=True)
class Finding:
    kind: str
    path: str
    line: int
    function: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.path}:{self.line} {self.function} ({self.what})"


def code_lines(source: str) -> int:
    """Lines of ``source`` that hold code: any token but a comment, and not blank."""
    lines = source.splitlines()
    covered: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            covered.update(range(token.start[0], token.end[0] + 1))
    return sum(1 for number in covered if number <= len(lines) and lines[number - 1].strip())


def findings(source: str, path: str) -> list[Finding]:
    """Every decode path, prefix sharing, model loading and conversion in ``source`` (the file ``path``)."""
    tree = ast.parse(source, filename=path)
    found: list[Finding] = []
    for name, scope in _functions(tree):
        found += _decode_paths(scope, path, name)
        found += _prefix_sharing(scope, path, name)
        found += _model_loading(scope, path, name)
    return sorted(found, key=lambda f: (f.path, f.line, f.kind))


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Each function (qualified ``Class.method``) and, as ``<module>``, the module's own statements."""
    yield "<module>", tree

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + child.name, child
                yield from walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _own(scope: ast.AST, loops: int = 0) -> Iterator[tuple[ast.AST, int]]:
    """The nodes of ``scope``'s own body (not of functions or classes defined in it), each with how many
    loops or comprehensions hold it."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, _SCOPES):
            continue
        yield child, loops
        yield from _own(child, loops + isinstance(child, _LOOPS))


def _is_step_loop(node: ast.AST) -> bool:
    """A ``while`` loop, or ``for ... in range(...)`` with a bound that names tokens."""
    if isinstance(node, ast.While):
        return True
    loop_range = getattr(node, "iter", None)
    return (isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(loop_range, ast.Call)
            and isinstance(loop_range.func, ast.Name) and loop_range.func.id == "range"
            and "token" in ast.unparse(loop_range.args).lower())


def _receiver(call: ast.Call) -> str:
    """The name of the object whose method ``call`` calls (``""`` for a plain function)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return ""
    value = func.value
    while isinstance(value, ast.Subscript):  # caches[i].select(...): the object is ``caches``
        value = value.value
    if isinstance(value, ast.Attribute):
        return value.attr
    return value.id if isinstance(value, ast.Name) else ""


def _passes_cache(call: ast.Call) -> bool:
    """Whether ``call`` hands a KV cache to what it calls (a builtin such as ``zip`` or the
    ``passing`` helper itself is no forward)."""
    if isinstance(call.func, ast.Name) and (call.func.id in _BUILTINS or call.func.id == "passing"):
        return False
    for keyword in call.keywords:
        if keyword.arg in CACHE_KEYWORDS:
            return True
        if (keyword.arg is None and isinstance(keyword.value, ast.Call) and isinstance(keyword.value.func, ast.Name)
                and keyword.value.func.id == "passing"):
            return True
    return any(isinstance(arg, ast.Name) and arg.id in CACHE_NAMES for arg in call.args)


def _decode_paths(scope: ast.AST, path: str, name: str) -> list[Finding]:
    found, seen = [], set()
    for node, _ in _own(scope):
        if _is_step_loop(node):
            for inner, _ in _own(node):
                if (isinstance(inner, ast.Call) and _passes_cache(inner) and "cache" not in _receiver(inner).lower()
                        and id(inner) not in seen):
                    seen.add(id(inner))
                    found.append(Finding("decode path", path, inner.lineno, name,
                                         f"`{ast.unparse(inner.func)}(...)` with the KV cache in a step loop"))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "forward" for t in node.targets):
            installed = _installed_function(node.value)
            if installed is not None:
                found.append(Finding("decode path", path, node.lineno, name, f"`{installed}` installed as a module's forward"))
    return found


def _installed_function(value: ast.AST) -> str | None:
    """The project function an assignment to ``.forward`` installs (None for a class's own forward)."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("functools.partial", "partial") and value.args:
        value = value.args[0]
    if isinstance(value, ast.Name):
        return value.id
    return "lambda" if isinstance(value, ast.Lambda) else None


def _prefix_sharing(scope: ast.AST, path: str, name: str) -> list[Finding]:
    if isinstance(scope, ast.Module):
        return []
    for node, loops in _own(scope):
        if (not loops and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ROW_OPERATIONS and "cache" in _receiver(node).lower()):
            return [Finding("prefix sharing", path, node.lineno, name,
                            f"`{ast.unparse(node.func)}(...)` gives the prompt's cache to its rows")]
    return []


def _model_loading(scope: ast.AST, path: str, name: str) -> list[Finding]:
    calls = [node for node, _ in _own(scope) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    saves = any(call.func.attr == "save_pretrained" for call in calls)
    found = []
    for call in calls:
        owner = call.func.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if call.func.attr == "from_pretrained" and MODEL_CLASS.match(owner_name):
            kind, what = ("conversion", "loads to save_pretrained in another form") if saves else ("model loading", "")
            found.append(Finding(kind, path, call.lineno, name, what or f"`{owner_name}.from_pretrained`"))
    return found


@dataclass
class Row:
    package: str
    lines: int = 0
    counts: Counter = field(default_factory=Counter)

    def add(self, lines: int, found: list[Finding]) -> None:
        self.lines += lines
        self.counts.update(f.kind for f in found)

    def cells(self) -> list[str]:
        return [self.package, str(self.lines), *(str(self.counts[kind]) for kind in KINDS)]


def census(root: Path = ROOT) -> tuple[list[Row], list[Finding]]:
    """One row per package and per package inside one (then the three together), and every finding."""
    rows: dict[str, Row] = {}
    total = Row("all three")
    everything: list[Finding] = []
    for package in PACKAGES:
        for file in sorted((root / package).rglob("*.py")):
            relative = file.relative_to(root)
            source = file.read_text(encoding="utf-8")
            found = findings(source, relative.as_posix())
            lines = code_lines(source)
            parts = relative.parts
            names = [parts[0]] + ([f"{parts[0]}.{parts[1]}"] if len(parts) > 2 else [])
            for name in names:
                rows.setdefault(name, Row(name)).add(lines, found)
            total.add(lines, found)
            everything += found
    ordered = [rows[name] for name in sorted(rows, key=lambda n: (PACKAGES.index(n.split(".")[0]), "." in n, n))]
    return [*ordered, total], everything


def table(rows: list[Row]) -> str:
    header = ["package", "lines", *COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "--:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Lines, decode paths, prefix sharing and model loading per package.")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="a checkout to count (another commit's worktree, for a before/after)")
    rows, found = census(parser.parse_args(argv).root)
    print("# House census\n")
    print(table(rows))
    print("\nWhere (the rules: `python -m pydoc benchmarks.house.census`):\n")
    for finding in found:
        print(f"- {finding}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
