"""MkDocs hook: a page line ``<!-- module-docstring: package.module -->`` becomes that module's docstring.

Each environment module's docstring is its documentation page, so the docs can never drift from
the code. The docstring is read with ``ast`` (the module is not imported). What follows the line up
to a closing ``<!-- /module-docstring -->`` is replaced too: a title and a pointer to the module for
readers of the source on a code host, where the comment is invisible.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

MARKER = re.compile(r"<!--\s*module-docstring:\s*([\w.]+)\s*-->(?:(?:(?!<!--).)*?<!--\s*/module-docstring\s*-->)?", re.S)


def _docstring(module: str) -> str:
    found = importlib.util.find_spec(module)
    if found is None or found.origin is None:
        raise ValueError(f"docs: module {module!r} not found")
    text = ast.get_docstring(ast.parse(Path(found.origin).read_text(encoding="utf-8")))
    if not text:
        raise ValueError(f"docs: module {module!r} has no docstring")
    return text


def on_page_markdown(markdown: str, **kwargs) -> str:
    return MARKER.sub(lambda match: _docstring(match.group(1)), markdown)
