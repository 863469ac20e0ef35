"""Assemble the program that runs: the prompt's context + the helper's code + main's code.

Who owns what:

* the helper agent owns every function it defines, except the entry point: a helper definition
  of the entry point is dropped (main writes it);
* main owns the entry point and any other function it defines, except names the helper agent
  defined: every top-level statement of main's that binds a helper function's name (``def aux``,
  ``aux = mine``, ``class aux``, ``import ... as aux``) is dropped, so the helper's work is what
  runs. Both drops are reported in feedback and details.

Under rules with counterfactual cooperation (``v2``) only ``aux``, the function the prompts ask for, is
the helper's function, and a helper definition that shadows a builtin or standard-library name that
main's code (or the prompt's) uses is dropped (``dropped_shadowing``): a helper that redefines ``range``
must not turn main's ordinary code into a use of the helper.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
import sys

from llm_coop_envs.coding.parsing import ParsedReply, Piece
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.prompts import HELPER_NAME

_COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PROTECTED_NAMES = frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names)
"""Names a helper may not redefine for main under counterfactual rules (builtins, standard modules)."""


@dataclasses.dataclass(frozen=True)
class SyntaxIssue:
    """A syntax error of the combined program, located in the agent's code that caused it."""

    message: str
    line: int | None
    """Line within the owner's code (the code extracted from its reply), 1-based."""
    col: int | None
    owner: str
    """"context", "helper" or "main": whose section the line falls in."""
    text: str
    """The offending line, stripped and truncated."""
    program_line: int | None = None
    """The same line counted in the whole program."""


@dataclasses.dataclass(frozen=True)
class Program:
    source: str
    helper_code: str
    main_code: str
    helper_functions: tuple[str, ...]
    """Functions the helper agent defined (kept in the program)."""
    helper_returns: bool
    """At least one helper function returns a value."""
    main_defined: bool
    """main's code defines the entry point."""
    dropped_from_helper: tuple[str, ...]
    dropped_from_main: tuple[str, ...]
    syntax: SyntaxIssue | None
    dropped_shadowing: tuple[str, ...] = ()
    """Builtin or standard-library names whose helper definitions were dropped (``v2`` rules)."""


def build_program(problem: CodingProblem, helper: ParsedReply, main: ParsedReply,
                  aux_only: bool = False) -> Program:
    """The program of ``helper`` and ``main``; ``aux_only``: the counterfactual rules' ownership."""
    entry = problem.entry_point
    helper_pieces = [p for p in helper.pieces if p.name != entry]
    shadowing: set[str] = set()
    if aux_only:
        used = _names_used(main) | _names_used_in(problem.context)
        shadowing = {n for p in helper_pieces for n in _binds(p) & PROTECTED_NAMES & used}
        helper_pieces = [p for p in helper_pieces if not _binds(p) & shadowing]
    helper_names = tuple(dict.fromkeys(p.name for p in helper_pieces if _is_function(p)
                                       and (not aux_only or p.name == HELPER_NAME)))
    rebinding = [p for p in main.pieces if _binds(p) & set(helper_names)]
    main_pieces = [p for p in main.pieces if p not in rebinding]
    helper_code = _join(helper_pieces)
    main_code = _join(main_pieces)
    sections = [("context", problem.context), ("helper", helper_code), ("main", main_code)]
    source, spans = _layout(sections)
    return Program(
        source=source,
        helper_code=helper_code,
        main_code=main_code,
        helper_functions=helper_names,
        helper_returns=any(_is_function(p) and p.name in helper_names and p.has_return for p in helper_pieces),
        main_defined=any(_is_function(p) and p.name == entry for p in main_pieces),
        dropped_from_helper=tuple(dict.fromkeys(p.name for p in helper.pieces if p.name == entry)),
        dropped_from_main=tuple(dict.fromkeys(n for p in rebinding for n in sorted(_binds(p) & set(helper_names)))),
        syntax=_syntax_issue(source, spans),
        dropped_shadowing=tuple(sorted(shadowing)),
    )


def _names_used(reply: ParsedReply) -> set[str]:
    return {n for p in reply.pieces for n in _names_used_in(p.source)}


def _names_used_in(code: str) -> set[str]:
    """Every name and attribute base that ``code`` mentions (unparsable code: every identifier in it)."""
    try:
        return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(_IDENTIFIER.findall(code))


def _binds(piece: Piece) -> set[str]:
    """The names a top-level piece binds: its function or class name, import aliases, assignment targets."""
    if piece.name is not None:
        return {piece.name}
    if piece.kind not in ("import", "assign"):
        return set()
    try:
        statement = ast.parse(piece.source).body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return set()
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_function(piece: Piece) -> bool:
    return piece.kind in ("function", "broken") and piece.name is not None


def _join(pieces: list[Piece]) -> str:
    return "\n\n".join(p.source for p in pieces)


def _layout(sections: list[tuple[str, str]]) -> tuple[str, list[tuple[str, int, int]]]:
    """The program text with a comment line per section, and each section's 1-based line span."""
    lines: list[str] = []
    spans = []
    for owner, code in sections:
        if not code.strip():
            continue
        lines.append(f"# --- {owner} ---")
        body = code.split("\n")
        spans.append((owner, len(lines) + 1, len(lines) + len(body)))
        lines += body + [""]
    return "\n".join(lines), spans


def _syntax_issue(source: str, spans: list[tuple[str, int, int]]) -> SyntaxIssue | None:
    try:
        # Compiling does not run anything; it also catches what the parser lets through
        # ('return' outside a function, a misplaced 'nonlocal').
        compile(source, "<program>", "exec", dont_inherit=True)
    except SyntaxError as error:
        line = error.lineno
        owner, first = next(
            ((o, first) for o, first, last in spans if line is not None and first <= line <= last), ("main", None)
        )
        local_line = line - first + 1 if line is not None and first is not None else line
        text = (error.text or "").strip()[:120]
        return SyntaxIssue(str(error.msg), local_line, error.offset, owner, text, program_line=line)
    except _COMPILE_ERRORS as error:
        return SyntaxIssue(message=f"{type(error).__name__}: {error}"[:200], line=None, col=None, owner="main", text="")
    return None
