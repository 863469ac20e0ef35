"""Why a writing bench's held-out pairs scored what they did: the first failed level of each pair.

A reward that pays 0 to every sample gives a policy-gradient trainer nothing to learn from. This
reads a bench's per-problem records, rescores each episode's last joint reply with the env's reward
and counts the first level each pair failed, its message with the numbers taken out.

    python -m benchmarks.writing.gate_reasons benchmarks/results/learning/tldr-v3/records/untrained-pair.jsonl --env tldr-v3
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainers.metrics_log import read_jsonl

PASSED = "every level passed"


def first_failures(records: Iterable[Mapping[str, Any]], env_id: str) -> collections.Counter[str]:
    """Message of the first failed level of each record's last joint reply, numbers as ``N``."""
    import llm_coop_envs

    task = llm_coop_envs.make(env_id, split="all").task
    index = {item.id: position for position, item in enumerate(task.items)}
    counts: collections.Counter[str] = collections.Counter()
    for record in records:
        score = task.score(index[record["task_id"]], record["replies"][-1])
        failed = next((level for level in score.levels if not level.passed), None)
        counts[PASSED if failed is None else re.sub(r"\d+(\.\d+)?", "N", failed.message)] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="a bench records file (one JSON object per line)")
    parser.add_argument("--env", required=True, help="the writing env id whose reward rescores the replies")
    args = parser.parse_args(argv)
    records = read_jsonl(args.records, missing_ok=False)
    print(f"| pairs | first failed level ({len(records)} pairs, `{args.env}`) |\n|---:|---|")
    for message, count in first_failures(records, args.env).most_common():
        print(f"| {count} | {message} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
