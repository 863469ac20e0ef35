"""The docs never send a reader to ``shared/``: the project's data folder sits beside a development
checkout and is not part of a user's clone (users give ``$LLM_COOP_DATA_DIR``, the Hub or a file)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = re.compile(r"(?<![/\w.])shared/")  # ``/shared/adapters`` (an example absolute path) is not it


def test_no_page_points_to_the_shared_folder():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    hits = [f"{page.relative_to(ROOT)}:{n}" for page in pages
            for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if SHARED.search(line)]
    assert not hits, hits
