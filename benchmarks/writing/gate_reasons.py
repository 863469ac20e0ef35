"""Why a writing bench's held-out pairs scored what they did: the first failed level of each pair,
and each text's failed structure gates.

A reward that pays 0 to every sample gives a policy-gradient trainer nothing to learn from. This
reads a bench's per-problem records, rescores each episode's last joint reply with the env's reward
and counts the first level each pair failed, its message with the numbers taken out; then, for the
pairs that failed a gate, how often each text failed each of its own gates
(:mod:`llm_coop_envs.writing.text_gates`) and the credit ``-v4`` pays them.

    python -m benchmarks.writing.gate_reasons benchmarks/results/learning/tldr-v3/records/untrained-pair.jsonl --env tldr-v4
"""

from __future__ import annotations

import argparse
import collections
import re
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainers.metrics_log import read_jsonl

PASSED = "every level passed"


def first_failures(records: Iterable[Mapping[str, Any]], env_id: str, **env_kwargs: Any) -> collections.Counter[str]:
    """Message of the first failed level of each record's last joint reply, numbers as ``N`` (``env_kwargs``
    go to ``make``, for example ``language_model``)."""
    import llm_coop_envs

    task = llm_coop_envs.make(env_id, split="all", **env_kwargs).task
    index = {item.id: position for position, item in enumerate(task.items)}
    counts: collections.Counter[str] = collections.Counter()
    for record in records:
        score = task.score(index[record["task_id"]], record["replies"][-1])
        failed = next((level for level in score.levels if not level.passed), None)
        # -v4's credit names every failed gate: counted below, per text, by gate_failures.
        message = None if failed is None else failed.message.split(" Credit ")[0]
        counts[PASSED if message is None else re.sub(r"\d+(\.\d+)?", "N", message)] += 1
    return counts


def gate_failures(records: Iterable[Mapping[str, Any]], env_id: str,
                  **env_kwargs: Any) -> tuple[dict[str, collections.Counter[str]], list[float]]:
    """For the records whose last joint reply fails a structure gate: per role, how many texts failed each
    gate, and the structure score each such pair earns under ``env_id`` (its gate credit; 0 on ``-v3``)."""
    import llm_coop_envs
    from llm_coop_envs.writing.text_gates import text_gates

    task = llm_coop_envs.make(env_id, split="all", **env_kwargs).task
    index = {item.id: position for position, item in enumerate(task.items)}
    failed: dict[str, collections.Counter[str]] = {role: collections.Counter() for role in task.agents}
    credits = []
    for record in records:
        replies = record["replies"][-1]
        gates = text_gates(task.pair(index[record["task_id"]], replies), task.config)
        if all(all(passed.values()) for passed in gates.values()):
            continue
        for role, passed in gates.items():
            failed[role].update(name for name, ok in passed.items() if not ok)
            failed[role]["(passes every gate)"] += all(passed.values())
        credits.append(task.score(index[record["task_id"]], replies).level_scores()["structure"])
    return failed, credits


def rescored(records: Sequence[Mapping[str, Any]], env_id: str, **env_kwargs: Any) -> tuple[float, float]:
    """(mean reward as recorded, mean reward of the same last joint replies under ``env_id`` as it is now):
    what a reward fixed after a run would have paid its replies."""
    import llm_coop_envs

    task = llm_coop_envs.make(env_id, split="all", **env_kwargs).task
    index = {item.id: position for position, item in enumerate(task.items)}
    now = [task.evaluate(index[record["task_id"]], record["replies"][-1]).reward.total for record in records]
    return statistics.mean(record["reward"] for record in records), statistics.mean(now)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="a bench records file (one JSON object per line)")
    parser.add_argument("--env", required=True, help="the writing env id whose reward rescores the replies")
    args = parser.parse_args(argv)
    records = read_jsonl(args.records, missing_ok=False)
    print(f"| pairs | first failed level ({len(records)} pairs, `{args.env}`) |\n|---:|---|")
    for message, count in first_failures(records, args.env).most_common():
        print(f"| {count} | {message} |")
    failed, credits = gate_failures(records, args.env)
    print(f"\n{len(credits)} pairs failed a structure gate; texts failing each gate:\n")
    print("| role | " + " | ".join(failed) + " |\n|---|" + "---:|" * len(failed))
    for name in sorted({n for counts in failed.values() for n in counts}):
        print(f"| {name} | " + " | ".join(str(counts[name]) for counts in failed.values()) + " |")
    recorded, now = rescored(records, args.env)
    print(f"\nMean reward of these {len(records)} pairs: {recorded:.4f} as recorded, {now:.4f} under `{args.env}` as it is now.")
    if credits:
        print(f"\nStructure credit of these pairs on `{args.env}`: mean {statistics.mean(credits):.3f}, "
              f"standard deviation {statistics.pstdev(credits):.3f}, range {min(credits):.3f}-{max(credits):.3f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
