"""Every results report under ``benchmarks/results/`` says which code it measured.

A report states it as the benchmark wrote it (``Code: commit `abc1234```, "from a worktree at `abc1234`",
"code **abc1234**"), or, for a report written before benchmarks recorded their code, by a line under its
title that names the commit that added it (``Added in commit abc1234 (2026-11-26); ...``). Left out: a
plan (``PLAN.md``, written before any run) and a superseded notice (``SUPERSEDED.md``), which report no
measurement of their own.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
NOT_REPORTS = {"PLAN.md", "SUPERSEDED.md"}
STATES_CODE = re.compile(
    r"(?i)\bcode:|\b(?:commit|code|worktree)\b[^\n]{0,40}?(?<![0-9A-Za-z.,])[0-9a-f]{7,40}(?![0-9A-Za-z.,])"
)


def states_its_code(text: str) -> bool:
    return STATES_CODE.search(text) is not None


def reports() -> list[Path]:
    return sorted(p for p in RESULTS.rglob("*.md") if p.name not in NOT_REPORTS)


def test_every_results_report_states_the_code_it_measured():
    found = reports()
    assert len(found) >= 40
    silent = [p.relative_to(RESULTS).as_posix() for p in found if not states_its_code(p.read_text(encoding="utf-8"))]
    assert not silent, f"results files that state neither their commit nor a 'Code:' line: {silent}"


def test_what_counts_as_stating_the_code():
    assert states_its_code("# T\n\nAdded in commit c58e0a2 (2026-11-26); the figures below are from that code.\n")
    assert states_its_code("Code: the working tree at 12:28:41.")
    assert states_its_code("(from a worktree at `410a86a`); the first step")
    assert states_its_code("Current figures: code **186d189** (the -v5 reward)")
    assert not states_its_code("# T\n\nCommand: `python -m benchmarks.perf.top_p_cost`\n\n| 1 | 2 |\n")
    assert not states_its_code("The commit of this table took 1234567.5 s")  # a number, not a hash
    assert not states_its_code("we commit to 10 runs")
