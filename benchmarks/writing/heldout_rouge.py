"""Held-out ROUGE-L of a TL;DR bench beside its reward: did the texts get closer to the author's TL;DR?

The writing reward from ``-v3`` on does not pay ROUGE (its weight is 0), so a bench on ``tldr-v3``
reports the reward it trained on. This script reads the same committed records and adds an outside
measure: the ROUGE-L F1 of each held-out episode's last ``tldr`` reply against the post author's own
TL;DR, untrained and after training, with the paired hierarchical bootstrap of the learning bench
(seeds, then problems). A reward that rose while ROUGE-L fell is worth a look at the samples.

    python -m benchmarks.writing.heldout_rouge benchmarks/results/learning/tldr-v3

It prints a markdown table and writes it to ``<folder>/rouge.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning import bootstrap
from trainers.metrics_log import read_jsonl

RECORDS = "records"


def references(env_id: str) -> dict[str, str]:
    """task id -> the author's TL;DR over every split (ids are unique across the data file)."""
    import llm_coop_envs

    env = llm_coop_envs.make(env_id, split="all")
    return {item.id: item.reference for item in env.task.items if item.reference}


def rouge_l(records: Sequence[Mapping[str, Any]], refs: Mapping[str, str], agent: str) -> dict[str, float]:
    """task id -> ROUGE-L F1 of the episode's last ``agent`` reply (0.0 when it wrote nothing)."""
    from llm_coop_envs.writing.rouge import rouge_f1

    scores = {}
    for record in records:
        texts = [step.get(agent) for step in record.get("replies", []) if isinstance(step.get(agent), str)]
        ref = refs.get(record["task_id"])
        if ref is not None:
            scores[record["task_id"]] = rouge_f1(texts[-1], ref)["rougeL"] if texts else 0.0
    return scores


def table(folder: Path, agent: str = "tldr") -> str:
    records = folder / RECORDS
    bench = json.loads((records / "bench.json").read_text())
    runs = [run for run in json.loads((records / "runs.json").read_text()) if run.get("status") == "done"]
    refs = references(bench["env"])
    if not runs:
        return "No finished run in the records.\n"
    lines = ["| algorithm | seeds | ROUGE-L untrained | ROUGE-L after | change (95 % interval) | reward untrained | reward after | reward change |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for algo in dict.fromkeys(run["algo"] for run in runs):
        mine = [run for run in runs if run["algo"] == algo]
        before, after = _load(records, mine, first=True), _load(records, mine, first=False)
        ids = sorted(set.intersection(*(set(r["task_id"] for r in recs) for recs in before + after)) & set(refs))
        rouge = [np.array([_row(rouge_l(recs, refs, agent), ids) for recs in side]) for side in (before, after)]
        reward = [np.array([_row({r["task_id"]: r["reward"] for r in recs}, ids) for recs in side]) for side in (before, after)]
        change, reward_change = (bootstrap.paired_difference(a, b) for a, b in (rouge[::-1], reward[::-1]))
        lines.append(f"| {algo} | {len(mine)} | {rouge[0].mean():.3f} | {rouge[1].mean():.3f} | "
                     f"{_fmt(change)} | {reward[0].mean():.2f} | {reward[1].mean():.2f} | {_fmt(reward_change, 2)} |")
    return "\n".join(lines) + f"\n\n{len(ids)} held-out posts (the last algorithm's); ROUGE-L F1 of the last `{agent}` reply against the author's TL;DR.\n"


def _load(records: Path, runs: Sequence[Mapping[str, Any]], first: bool) -> list[list[dict[str, Any]]]:
    """Each run's untrained (first) or last evaluated records."""
    out = []
    for run in runs:
        steps = sorted(run["evals"], key=int)
        path = records / run["evals"][steps[0] if first else steps[-1]]
        out.append(read_jsonl(path, missing_ok=False))
    return out


def _row(values: Mapping[str, float], ids: Sequence[str]) -> list[float]:
    return [values[i] for i in ids]


def _fmt(interval: bootstrap.Interval, digits: int = 3) -> str:
    return f"{interval.mean:+.{digits}f} [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a bench results folder (with records/)")
    parser.add_argument("--agent", default="tldr", help="the agent whose text is compared with the reference")
    args = parser.parse_args(argv)
    text = table(args.folder, args.agent)
    (args.folder / "rouge.md").write_text("# Held-out ROUGE-L beside the reward\n\n    python -m benchmarks.writing.heldout_rouge "
                                         f"{args.folder.as_posix()}\n\n{text}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
