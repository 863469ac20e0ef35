"""MkDocs hook: the line ``<!-- sandbox-limits-table -->`` becomes the table of ``SandboxConfig``'s fields.

Each row is a field's name, its default (read from the dataclass) and its docstring (read with ``ast``
from ``llm_coop_envs/sandbox/config.py``), so the limits are written once, in the code.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect

MARKER = "<!-- sandbox-limits-table -->"


def _default(value) -> str:
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"{value:,}" if isinstance(value, (int, float)) else f"`{value!r}`"


def field_docs(cls) -> dict[str, str]:
    """Each field's attribute docstring (the string right below it), on one line."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {node.target.id: " ".join(body[i + 1].value.value.split())
            for i, node in enumerate(body[:-1])
            if isinstance(node, ast.AnnAssign) and isinstance(body[i + 1], ast.Expr)
            and isinstance(body[i + 1].value, ast.Constant) and isinstance(body[i + 1].value.value, str)}


def limits_table() -> str:
    from llm_coop_envs.sandbox.config import SandboxConfig

    docs = field_docs(SandboxConfig)
    defaults = SandboxConfig()
    lines = ["| field | default | meaning |", "|---|---|---|"]
    for field in dataclasses.fields(SandboxConfig):
        meaning = docs[field.name].replace("|", "\\|")
        lines.append(f"| `{field.name}` | {_default(getattr(defaults, field.name))} | {meaning} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs) -> str:
    return markdown.replace(MARKER, limits_table()) if MARKER in markdown else markdown
