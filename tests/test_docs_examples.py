"""Every ```python block in README.md and docs/ runs as written, each in a fresh interpreter.

A block that cannot run here (it needs a model download, a GPU or a long run, or it shows only part
of a program) is marked on the line before it with ``<!-- fragment: the reason -->``; the reason is
required. A block marked ``<!-- file: my_package/echo.py -->`` runs, and is also saved under that
path for the page's later blocks. Blocks run from a scratch folder with the repository importable. The datasets come from
``$LLM_COOP_DATA_DIR`` (tests/conftest.py sets it when the shared folder is beside the checkout); a
block that stops for lack of data when there is none is skipped, saying so.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>fragment|file)\b:?(?P<value>.*?)-->\s*$")
TIMEOUT_S = 300

sys.path.insert(0, str(ROOT / "docs" / "hooks"))
import env_docstrings  # noqa: E402  (the MkDocs hook that puts module docstrings into pages)

INCLUDED_DOCSTRING = env_docstrings.MARKER


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    fragment: str | None
    """None for a block that must run; else what its ``<!-- fragment: ... -->`` marker says (maybe empty)."""
    saved_as: str | None = None
    """The path its ``<!-- file: ... -->`` marker names."""

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def page_texts() -> list[tuple[str, str]]:
    """(name, Markdown) of every page, and of every module docstring a page includes (docs/hooks)."""
    texts = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        texts.append((str(path.relative_to(ROOT)), text))
        for module in INCLUDED_DOCSTRING.findall(text):
            texts.append((f"{module} (docstring)", env_docstrings._docstring(module)))
    return texts


def python_blocks(page: str, text: str) -> list[Block]:
    """The ```python blocks of a Markdown text (fences inside other fences are text, not blocks)."""
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        end = index + 1
        while end < len(lines) and not re.match(rf"^[ \t]*{fence[0]}{{{len(fence)},}}[ \t]*$", lines[end]):
            end += 1
        if opening["info"] in ("python", "py"):
            previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
            marker = MARKER.match(previous)
            kind, value = (marker["kind"], marker["value"].strip()) if marker else (None, None)
            code = textwrap.dedent("\n".join(lines[index + 1 : end]))
            fragment = value if kind == "fragment" else None
            blocks.append(Block(page, index + 1, code, fragment, value if kind == "file" else None))
        index = end + 1
    return blocks


BLOCKS = [block for page, text in page_texts() for block in python_blocks(page, text)]


def test_the_pages_have_blocks():
    assert len(BLOCKS) > 10 and any(b.page == "README.md" for b in BLOCKS)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.fragment is not None], ids=lambda b: b.name)
def test_fragments_say_why(block):
    assert block.fragment, f"{block.name}: say why the block cannot run: <!-- fragment: reason -->"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.fragment is None], ids=lambda b: b.name)
def test_block_runs(block, tmp_path):
    for earlier in BLOCKS:
        if earlier.page == block.page and earlier.line < block.line and earlier.saved_as:
            (tmp_path / earlier.saved_as).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / earlier.saved_as).write_text(earlier.code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.setdefault("HF_HUB_OFFLINE", "1")  # never the real Hub: without local data the block stops at once
    try:
        result = subprocess.run(
            [sys.executable, "-c", block.code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.name} ran past {TIMEOUT_S} s: shorten it or mark it as a fragment, saying why")
    if result.returncode != 0 and "DataNotFoundError" in result.stderr and not os.environ.get("LLM_COOP_DATA_DIR"):
        pytest.skip(f"{block.name} needs the datasets: set LLM_COOP_DATA_DIR to run it")
    assert result.returncode == 0, f"{block.name} failed:\n{result.stderr[-3000:]}"


def test_parser_reads_markers_and_skips_nested_fences():
    page = (
        "<!-- fragment -->\n```python\nmissing_reason()\n```\n\n"
        "<!-- file: pkg/mod.py -->\n```python\nX = 1\n```\n"
        "````text\n```python\nnot_a_block()\n```\n````\n"
        "    ```python\n    indented = True\n    ```\n"
    )
    blocks = python_blocks("page.md", page)
    assert [(b.line, b.code, b.fragment, b.saved_as) for b in blocks] == [
        (2, "missing_reason()", "", None),
        (7, "X = 1", None, "pkg/mod.py"),
        (15, "indented = True", None, None),
    ]
