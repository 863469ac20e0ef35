"""MkDocs hook: a line ``<!-- results-summary: NAME.md -->`` becomes the summary of ``benchmarks/results/NAME.md``.

The summary is the results file up to its first ``## `` section, without its title: the command, the
machine and the measured table, as the benchmark wrote them. The docs so show measured figures
without retyping them, and show the latest ones whenever the benchmark is run again.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
MARKER = re.compile(r"<!--\s*results-summary:\s*([\w./-]+\.md)\s*-->")


def summary(name: str) -> str:
    path = RESULTS / name
    if not path.is_file():
        raise ValueError(f"docs: no results file benchmarks/results/{name}")
    text = path.read_text(encoding="utf-8").split("\n## ", 1)[0]
    lines = text.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip()


def on_page_markdown(markdown: str, **kwargs) -> str:
    return MARKER.sub(lambda match: summary(match.group(1)), markdown)
