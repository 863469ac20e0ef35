"""Turn a model's reply (any string) into the Python code it contains.

Models wrap code in Markdown fences, add prose before, between and after functions, write several
functions, or are cut off mid-block. The parser keeps what can run and remembers what it dropped:

1. NUL bytes are removed and line endings normalised.
2. If the reply has fenced blocks (```` ``` ````), their contents are the code (blocks tagged with
   another language, such as ``bash``, are skipped when a Python or untagged block exists);
   an unclosed fence runs to the end of the reply. Otherwise the whole reply is the code.
3. Code that parses as a whole is split into its top-level statements. Otherwise it is cut into
   top-level chunks (a line at column 0 starts one; lines inside triple-quoted strings never do);
   a chunk that does not parse is retried joined with up to three following chunks; a chunk that
   still fails is kept as *broken code* when it starts like code (``def``, ``class``, ``import``,
   a decorator) so that the syntax level can report it, and dropped as prose otherwise.
4. Only definitions are kept: imports, functions, classes and constant assignments. Calls,
   prints, example usage and ``if __name__ == "__main__":`` blocks are dropped.
5. ``first_block=True`` (prompt sets that ask for one block, :mod:`.pair_prompts`): only the first
   fenced block that defines something is code; later blocks are dropped ("a later code block").
   A small model repeats its answer block after block until its token cap cuts the last one, and
   a cut ``return x + 1`` of ``return x + 12`` still parses and, defined last, would win.

Every step is linear in the reply's length (no backtracking regular expressions; a bounded number
of ``ast.parse`` calls per chunk) and nothing here raises.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap

MAX_MERGED_CHUNKS = 3
PYTHON_TAGS = ("", "python", "python3", "py", "py3")
_KEPT_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


@dataclasses.dataclass(frozen=True)
class Piece:
    """One kept top-level unit of code."""

    kind: str
    """"import", "function", "class", "assign" or "broken" (code that does not parse)."""
    source: str
    name: str | None = None
    """The function or class name (also for broken code that starts with ``def name(``)."""
    has_return: bool = False
    """Functions: the body returns a value somewhere (``return <expr>``)."""


@dataclasses.dataclass(frozen=True)
class ParsedReply:
    """The code found in one reply."""

    pieces: tuple[Piece, ...]
    origin: str
    """"fenced" (code came from Markdown fences), "bare" (the reply itself) or "empty"."""
    dropped: tuple[str, ...] = ()
    """What was left out, in words (e.g. "prose", "a top-level call"), in order, without repeats."""

    def functions(self) -> dict[str, Piece]:
        """Top-level functions by name (later definitions win, as in Python); broken ones included."""
        return {p.name: p for p in self.pieces if p.name is not None and p.kind in ("function", "broken")}

    def summary(self) -> dict:
        """JSON-friendly description for ``Evaluation.details``."""
        return {
            "origin": self.origin,
            "pieces": [{"kind": p.kind, "name": p.name} for p in self.pieces],
            "dropped": list(self.dropped),
        }


def parse_reply(reply: str, first_block: bool = False) -> ParsedReply:
    """The code in ``reply``; see the module docstring (``first_block``: its step 5). Never raises."""
    try:
        return _parse(reply, first_block)
    except Exception:  # noqa: BLE001  (a parser bug must cost the reply, not the episode)
        return ParsedReply(pieces=(), origin="empty", dropped=("unparseable reply",))


def _parse(reply: str, first_block: bool = False) -> ParsedReply:
    text = reply.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return ParsedReply(pieces=(), origin="empty")
    blocks = fenced_blocks(text)
    if blocks:
        pieces, dropped = _first_block_pieces(blocks) if first_block else _blocks_pieces(blocks)
        if any(p.kind != "import" for p in pieces):
            return ParsedReply(tuple(pieces), "fenced", tuple(dict.fromkeys(dropped)))
        # The fences held only examples or output: the code is outside them.
        text = "\n".join(line for line in text.split("\n") if not line.strip().startswith("```"))
    pieces, dropped = _blocks_pieces([text])
    return ParsedReply(tuple(pieces), "bare", tuple(dict.fromkeys(dropped)))


def _blocks_pieces(blocks: list[str]) -> tuple[list[Piece], list[str]]:
    pieces: list[Piece] = []
    dropped: list[str] = []
    for block in blocks:
        block_pieces, block_dropped = _block_pieces(_dedent(block))
        pieces += block_pieces
        dropped += block_dropped
    return pieces, dropped


def _first_block_pieces(blocks: list[str]) -> tuple[list[Piece], list[str]]:
    """The pieces of the first block that defines something (what it dropped, and any later block)."""
    for index, block in enumerate(blocks):
        pieces, dropped = _blocks_pieces([block])
        if any(p.kind != "import" for p in pieces):
            return pieces, dropped + (["a later code block"] if index + 1 < len(blocks) else [])
    return _blocks_pieces(blocks)


# ----------------------------------------------------------------------------- fences
def fenced_blocks(text: str) -> list[str]:
    """Contents of Markdown code fences; Python/untagged ones if any exist, else all."""
    blocks: list[tuple[str, str]] = []
    tag: str | None = None
    lines: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if tag is None:
            if stripped.startswith("```"):
                tag, lines = stripped[3:].strip().lower(), []
        elif stripped.startswith("```"):
            blocks.append((tag, "\n".join(lines)))
            tag = None
        else:
            lines.append(line)
    if tag is not None:  # cut off inside a block: keep what was written
        blocks.append((tag, "\n".join(lines)))
    python = [body for tag, body in blocks if tag in PYTHON_TAGS]
    return python or [body for _, body in blocks]


def _dedent(block: str) -> str:
    # Code indented as a whole (inside a list item, or by a chat template) still counts.
    return textwrap.dedent(block)


# ----------------------------------------------------------------------------- statements
def _block_pieces(block: str) -> tuple[list[Piece], list[str]]:
    module = _try_parse(block)
    if module is not None:
        return _module_pieces(module, block.split("\n"))
    pieces: list[Piece] = []
    dropped: list[str] = []
    chunks = top_level_chunks(block)
    index = 0
    while index < len(chunks):
        consumed, module, text = _parse_with_followers(chunks, index)
        if module is not None:
            kept, lost = _module_pieces(module, text.split("\n"))
            pieces += kept
            dropped += lost
        elif _looks_like_code(text):
            pieces.append(Piece(kind="broken", source=text, name=_def_name(text), has_return="return" in text))
        elif text.strip():
            dropped.append("prose")
        index += consumed
    return pieces, dropped


def _parse_with_followers(chunks: list[str], index: int) -> tuple[int, ast.Module | None, str]:
    """Parse chunk ``index``, joined with up to MAX_MERGED_CHUNKS following chunks if needed.

    Returns (chunks consumed, module or None, text). A failing chunk consumes only itself.
    """
    text = chunks[index]
    for extra in range(MAX_MERGED_CHUNKS + 1):
        if index + extra >= len(chunks):
            break
        candidate = "\n".join(chunks[index : index + extra + 1])
        if extra and not _looks_like_continuation(chunks[index + extra]):
            break
        module = _try_parse(candidate)
        if module is not None:
            return extra + 1, module, candidate
    return 1, None, text


def _module_pieces(module: ast.Module, lines: list[str]) -> tuple[list[Piece], list[str]]:
    pieces: list[Piece] = []
    dropped: list[str] = []
    for node in module.body:
        piece = _piece(node, lines)
        if piece is not None:
            pieces.append(piece)
        else:
            dropped.append(_describe_dropped(node))
    return pieces, dropped


def _piece(node: ast.stmt, lines: list[str]) -> Piece | None:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    source = "\n".join(lines[first - 1 : node.end_lineno])
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return Piece(kind="import", source=source)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return Piece(kind="function", source=source, name=node.name, has_return=returns_value(node))
    if isinstance(node, ast.ClassDef):
        return Piece(kind="class", source=source, name=node.name)
    if _is_constant_assignment(node):
        return Piece(kind="assign", source=source)
    return None


def returns_value(function: ast.AST) -> bool:
    """Whether ``function``'s own body has ``return <expr>`` (nested functions do not count)."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return False


def _is_constant_assignment(node: ast.stmt) -> bool:
    """``NAME = <expression without calls>`` (e.g. ``MOD = 10**9 + 7``): safe to keep at load time."""
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return False
    simple = all(isinstance(t, ast.Name) for t in targets)
    return simple and not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.NamedExpr)) for n in ast.walk(value))


def _describe_dropped(node: ast.stmt) -> str:
    if isinstance(node, ast.If) and "__name__" in {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}:
        return "a __main__ block"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return "a bare string or constant"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return "a top-level call"
    if isinstance(node, ast.Assert):
        return "a top-level assert"
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return "a top-level assignment that runs code"
    return f"a top-level {type(node).__name__} statement"


def _try_parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except _PARSE_ERRORS:
        return None


# ----------------------------------------------------------------------------- chunks
def top_level_chunks(code: str) -> list[str]:
    """Cut ``code`` at lines that start at column 0 outside triple-quoted strings.

    A decorator line stays with what follows it; a line that starts with a closing bracket
    continues the previous chunk.
    """
    chunks: list[list[str]] = []
    in_string: str | None = None
    for line in code.split("\n"):
        starts_chunk = in_string is None and line[:1] not in ("", " ", "\t", ")", "]", "}")
        if starts_chunk and not (chunks and chunks[-1][-1].startswith("@")) or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
        in_string = _string_state_after(line, in_string)
    return ["\n".join(chunk).rstrip() for chunk in chunks]


def _string_state_after(line: str, state: str | None) -> str | None:
    """Which triple quote (if any) is open after ``line``, given the one open before it.

    A small scanner: skips escapes, one-line strings and comments. Linear in the line's length.
    """
    i, n = 0, len(line)
    while i < n:
        char = line[i]
        if state is not None:
            if char == "\\":
                i += 2
                continue
            if line.startswith(state, i):
                state, i = None, i + 3
                continue
            i += 1
            continue
        if char == "#":
            return None
        if char in "\"'":
            if line.startswith(char * 3, i):
                state, i = char * 3, i + 3
                continue
            i = _skip_short_string(line, i, char)
            continue
        i += 1
    return state


def _skip_short_string(line: str, start: int, quote: str) -> int:
    i = start + 1
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line[i] == quote:
            return i + 1
        else:
            i += 1
    return i


def _looks_like_code(text: str) -> bool:
    head = text.lstrip("\n").split("\n", 1)[0]
    words = head.split()
    if not words:
        return False
    first = words[0]
    if head.startswith("@") or first in ("def", "class") or (first == "async" and words[1:2] == ["def"]):
        return True
    if first == "import" and len(words) >= 2 and _dotted(words[1].rstrip(",")):
        return True
    return first == "from" and len(words) >= 3 and _dotted(words[1]) and words[2] == "import"


def _looks_like_continuation(chunk: str) -> bool:
    # Joining is for multi-line constructs cut at column 0 (a signature, a dict literal), not prose.
    head = chunk.split("\n", 1)[0]
    if head.startswith(("def ", "async def ", "class ", "@")):
        return False  # a new definition never continues the previous one
    return not head[:1].isalpha() or _try_parse(chunk) is not None


def _dotted(word: str) -> bool:
    return bool(word) and all(part.isidentifier() for part in word.split("."))


def _def_name(text: str) -> str | None:
    head = text.lstrip("\n").split("\n", 1)[0].split()
    if head[:1] == ["async"]:
        head = head[1:]
    if len(head) >= 2 and head[0] == "def":
        name = head[1].split("(", 1)[0]
        return name if name.isidentifier() else None
    return None
