"""The README's measured figures are the results files' own: each row of its table links the file under
``benchmarks/results/`` that measured it, and every decimal figure of the row is written in that file."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured_rows() -> list[tuple[str, Path]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("|") and "](benchmarks/results/" in line]
    return [(row, ROOT / re.search(r"\]\((benchmarks/results/[^)]+)\)", row).group(1)) for row in rows]


def test_each_measured_figure_is_written_in_the_results_file_its_row_links():
    rows = measured_rows()
    assert len(rows) >= 3
    for row, path in rows:
        result = row.split("|")[2]
        figures = re.findall(r"\d+\.\d+", result)
        assert figures, row
        text = path.read_text(encoding="utf-8")
        missing = [f for f in figures if not re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", text)]
        assert not missing, f"README states {missing} that {path.relative_to(ROOT)} does not hold"
