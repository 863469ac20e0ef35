"""Calibration figures of ``coop_procedural-v0`` from the episodes of ``llm-coop eval`` runs.

Per level of the suite: problems, pass rate (every hidden test passes, averaged over samples), the
share of groups (the samples of one problem) whose ``tests`` reward component is not the same for
every sample -- a group-relative algorithm (MAGRPO, GRPO) learns correctness only from those -- and
the share of episodes in which main calls the helper.

    python -m benchmarks.procedural_calibration runs/calibration/sampled/episodes.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

LEVEL = re.compile(r"/L(\d+)/")


def read_episodes(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def level_table(episodes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per level (and one for all levels) of the figures in the module docstring."""
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for episode in episodes:
        groups[episode["task_id"]].append(episode)
    by_level: dict[str, list[list[dict[str, Any]]]] = collections.defaultdict(list)
    for task_id, group in groups.items():
        match = LEVEL.search(task_id)
        by_level[match.group(1) if match else "?"].append(group)
        by_level["all"].append(group)
    return [_figures(level, by_level[level]) for level in sorted(by_level, key=lambda k: (k == "all", k))]


def _figures(level: str, groups: Sequence[list[dict[str, Any]]]) -> dict[str, Any]:
    episodes = [e for g in groups for e in g]
    varies = [len({round(e["components"].get("tests", 0.0), 9) for e in g}) > 1 for g in groups]
    return {
        "level": level, "problems": len(groups), "samples": len(episodes) // max(len(groups), 1),
        "pass_rate": sum(e["solved"] for e in episodes) / len(episodes),
        "any_test_passed": sum(e["components"].get("tests", 0.0) > 0 for e in episodes) / len(episodes),
        "tests_vary": sum(varies) / len(groups),
        "calls_helper": sum(bool(e.get("cooperates")) for e in episodes) / len(episodes),
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| level | problems | samples | pass rate | episodes passing a test | groups whose tests vary | main calls aux |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['level']} | {r['problems']} | {r['samples']} | {r['pass_rate']:.1%} | "
                     f"{r['any_test_passed']:.1%} | {r['tests_vary']:.1%} | {r['calls_helper']:.1%} |")
    return "\n".join(lines).replace("%", " %")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("episodes", type=Path, help="episodes.jsonl of an llm-coop eval run")
    args = parser.parse_args(argv)
    print(markdown(level_table(read_episodes(args.episodes))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
