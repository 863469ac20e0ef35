"""Replay committed ``coop_procedural-v0`` learning records under the ``v2`` scoring rules.

Each record holds the replies of one held-out episode. The same problems (v0's, rebuilt from their
seeds) are scored again by the ``v1`` rules the records were made under and by the ``v2`` rules, and
every episode whose cooperation credit (``uses_helper`` + ``beyond_wrapper`` + ``ignored_return``)
changes is listed with the reason read from ``details["helper_dependence"]``.

    python -m benchmarks.replay_cooperation benchmarks/results/learning/coop_procedural-v0 \
        --out benchmarks/results/coop_procedural_v0_replay_v2.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.machine import uptime
from llm_coop_envs.coding.factory import coding_env
from llm_coop_envs.coding.procedural.build import SUITE
from llm_coop_envs.coding.procedural.env import split_rows

COOPERATION = ("uses_helper", "beyond_wrapper", "ignored_return")
EVAL_SETS = {"records": "test", "families/records": "heldout_families"}
"""Where each evaluation set's records lie under the run folder, and the split they were drawn from."""


def credit(components: dict[str, float]) -> float:
    return round(sum(components.get(name, 0.0) for name in COOPERATION), 6)


def reason(details: dict[str, Any]) -> str:
    """Why ``v2`` pays less (or more) cooperation credit than ``v1`` for one reply."""
    dependence = details.get("helper_dependence") or {}
    if details.get("dropped_shadowing"):
        return "helper definitions shadowing builtins dropped: " + ", ".join(details["dropped_shadowing"])
    if not dependence.get("checked"):
        return "no counterfactual run (a hidden test failed, or main calls no `aux`)"
    passed = dependence.get("stand_ins_passed") or []
    if passed:
        return "main passes with `aux` replaced by: " + ", ".join(passed)
    failed = [name for name, ok in (dependence.get("pairings") or {}).items() if not ok]
    if failed:
        return "pairing failed: " + ", ".join(failed)
    if dependence.get("aux_alone_passes"):
        return "`aux` alone passes every hidden test (a wrapper)"
    return "needed"


def replay(run_dir: Path, per_cell: int = 30, level: int = 1) -> list[dict[str, Any]]:
    """One entry per pair episode that earns cooperation credit under either rules (``changed`` says
    whether the credit differs), plus a count of the pair episodes and of v1 rescores that differ from
    the recorded reward (a check that the replay scores what the run scored)."""
    changes = []
    for folder, split in EVAL_SETS.items():
        rows = split_rows(split, (level,), per_cell)
        index = {row["task_id"]: i for i, row in enumerate(rows)}
        for path in sorted((run_dir / folder).glob("**/*.jsonl")):
            records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            team = "pair" if "helper" in records[0]["replies"][-1] else "single"
            if team == "single":
                continue  # one agent, no helper: no cooperation credit under any rules
            items = [(index[r["task_id"]], r["replies"][-1]) for r in records]
            old, new = (coding_env(SUITE, rows, split="all", name=f"replay-{rules}", rules=rules).task.evaluate_many(items)
                        for rules in ("v1", "v2"))
            for record, before, after in zip(records, old, new):
                entry = {"file": f"{folder}/{path.relative_to(run_dir / folder)}", "task_id": record["task_id"],
                         "recorded": record["reward"], "v1": credit(before.reward.components),
                         "v2": credit(after.reward.components), "v1_total": round(before.reward.total, 3),
                         "v2_total": round(after.reward.total, 3), "reason": reason(dict(after.details))}
                entry["changed"] = entry["v1"] != entry["v2"]
                entry["replay_differs"] = abs(before.reward.total - record["reward"]) > 1e-6
                changes.append(entry)
    return changes


def report(episodes: list[dict[str, Any]], run_dir: str, total: int) -> str:
    credited = [e for e in episodes if e["v1"] or e["v2"]]
    changed = [e for e in credited if e["changed"]]
    differs = sum(e["replay_differs"] for e in episodes)
    lines = [
        "# coop_procedural-v0 learning records replayed under the v2 rules", "",
        f"Records: `{run_dir}` ({total} episodes, {len(episodes)} of them a pair's; a single agent has no "
        "helper and no cooperation credit). Each pair episode's replies were scored again on the same v0 "
        "problems by the v1 rules (as recorded) and by the v2 rules. v1 rescores that differ from the recorded "
        f"reward: {differs}.", "",
        f"Command: `python -m benchmarks.replay_cooperation {run_dir}`; machine load: {uptime()}", "",
        f"Pair episodes with cooperation credit (uses_helper + beyond_wrapper + ignored_return) under either "
        f"rules: {len(credited)}; whose credit changes under v2: **{len(changed)}**.", "",
        "| records | task | credit v1 | credit v2 | total v1 | total v2 | v2's counterfactual |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    lines += [f"| {e['file']} | {e['task_id']} | {e['v1']:.1f} | {e['v2']:.1f} | {e['v1_total']:.3f} | "
              f"{e['v2_total']:.3f} | {e['reason']} |" for e in credited]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    episodes = sum(len(p.read_text().splitlines()) for folder in EVAL_SETS
                   for p in (args.run_dir / folder).glob("**/*.jsonl"))
    text = report(replay(args.run_dir), str(args.run_dir), episodes)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
