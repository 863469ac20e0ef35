"""MkDocs hook: a line ``<!-- results-summary: NAME.md -->`` becomes the summary of ``benchmarks/results/NAME.md``,
and ``<!-- results-section: NAME.md | Heading -->`` the body of that file's ``## Heading`` section.

The summary is the results file up to its first ``## `` section, without its title: the command, the
machine and the measured table, as the benchmark wrote them. The docs so show measured figures
without retyping them, and show the latest ones whenever the benchmark is run again.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
MARKER = re.compile(r"<!--\s*results-summary:\s*([\w./-]+\.md)\s*-->")
SECTION = re.compile(r"<!--\s*results-section:\s*([\w./-]+\.md)\s*\|\s*(.+?)\s*-->")
LOCAL_IMAGE = re.compile(r"!\[([^\]]*)\]\((?![a-z]+:|/)([^)\s]+)\)")
"""An image beside the results file: the docs site does not hold it, so the page names its path."""


def summary(name: str) -> str:
    path = RESULTS / name
    if not path.is_file():
        raise ValueError(f"docs: no results file benchmarks/results/{name}")
    text = path.read_text(encoding="utf-8").split("\n## ", 1)[0]
    lines = text.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip()


def section(name: str, heading: str) -> str:
    """The body of the ``## `` section of ``benchmarks/results/NAME.md`` whose heading starts with ``heading``."""
    path = RESULTS / name
    if not path.is_file():
        raise ValueError(f"docs: no results file benchmarks/results/{name}")
    for part in path.read_text(encoding="utf-8").split("\n## ")[1:]:
        title, _, body = part.partition("\n")
        if title.startswith(heading):
            return body.strip()
    raise ValueError(f"docs: benchmarks/results/{name} has no section '## {heading}'")


def local_images(text: str, name: str) -> str:
    """Images linked relative to ``benchmarks/results/NAME.md`` become a line naming the file."""
    folder = Path("benchmarks/results", name).parent.as_posix()
    return LOCAL_IMAGE.sub(lambda match: f"*Figure: {match.group(1)} (`{folder}/{match.group(2)}`).*", text)


def on_page_markdown(markdown: str, **kwargs) -> str:
    markdown = SECTION.sub(lambda match: local_images(section(match.group(1), match.group(2)), match.group(1)), markdown)
    return MARKER.sub(lambda match: local_images(summary(match.group(1)), match.group(1)), markdown)
