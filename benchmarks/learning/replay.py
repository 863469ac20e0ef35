"""Replay a committed learning bench's records through today's code: does every reward come out the same?

    python -m benchmarks.learning.replay benchmarks/results/learning/<env> [--limit N] [--out FILE]

Each record (``records/untrained-*.jsonl``, ``records/<run>/step_*.jsonl``) keeps one held-out episode:
its problem and every turn's replies. The replay builds the held-out env the bench evaluated on (from
``records/bench.json``: the env id and the overrides, as the bench's own evaluation reads them), resets
it on the record's problem with the evaluation's seed, steps it with the recorded replies, and compares
the final joint reward and every reward component with the record's. A change that must not change what
an env id means (a refactor of the language model under a writing reward, of the sandbox under a coding
one) replays its ids' records to show it; a record that differs is listed with both values.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.machine import code_version, uptime

def held_out_env(bench: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The env the bench evaluated on, and its kwargs, from ``bench.json``'s env id and overrides."""
    import llm_coop_envs
    from benchmarks.learning.evaluation import eval_env_kwargs
    from trainers.config import load_config

    cfg = load_config(overrides=[f"env={bench['env']}", *bench.get("overrides", ())])
    kwargs = eval_env_kwargs(cfg)
    return llm_coop_envs.make(bench["env"], **kwargs), kwargs


def record_files(records: Path) -> list[Path]:
    return sorted(records.glob("untrained-*.jsonl")) + sorted(records.glob("*/step_*.jsonl"))


def replay(env: Any, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each record's replayed final joint reward and components. All the file's episodes are stepped
    together, as the bench's evaluation stepped them (a scoring model's batches are then the same rows,
    and so are its last bits)."""
    from benchmarks.learning.evaluation import EVAL_SEED
    from llm_coop_envs.core.runner import run_episodes

    turns = [0] * len(rows)

    def recorded(requests):
        replies = [rows[r.episode]["replies"][turns[r.episode]].get(r.agent, "") for r in requests]
        for episode in {r.episode for r in requests}:
            turns[episode] += 1
        return replies

    episodes = run_episodes([copy.deepcopy(env) for _ in rows], recorded, seeds=[EVAL_SEED] * len(rows),
                            options=[{"task_id": row["task_id"]} for row in rows])
    out = []
    for episode in episodes:
        info = episode.final.info if episode.final is not None else {}
        components = {k: float(v) for k, v in (info.get("reward_components") or {}).items() if isinstance(v, (int, float))}
        out.append({"reward": episode.final.joint_reward if episode.final is not None else 0.0,
                    "components": components, "error": episode.error})
    return out


def compare(rows: Sequence[Mapping[str, Any]], replayed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How many records replay to the same reward and components, bit for bit, and the largest difference."""
    same, largest, differing = 0, 0.0, []
    for row, again in zip(rows, replayed):
        names = set(row.get("components", {})) | set(again["components"])
        gaps = [abs(row["reward"] - again["reward"])] + [
            abs(row.get("components", {}).get(n, 0.0) - again["components"].get(n, 0.0)) for n in names]
        largest = max(largest, *gaps)
        if max(gaps) == 0.0 and not again["error"]:
            same += 1
        else:
            differing.append({"task_id": row["task_id"], "recorded": row["reward"], "replayed": again["reward"],
                              "error": again["error"]})
    return {"records": len(rows), "same": same, "largest_difference": largest, "differing": differing}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path, help="a committed bench folder (holding records/bench.json)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many records per file")
    parser.add_argument("--out", type=Path, default=None, help="write the report (markdown) here")
    args = parser.parse_args(argv)
    records = args.bench / "records"
    bench = json.loads((records / "bench.json").read_text(encoding="utf-8"))
    load = uptime()
    env, kwargs = held_out_env(bench)
    lines = [f"# Replay of `{args.bench.as_posix()}` ({bench['env']}, held-out kwargs `{json.dumps(kwargs)}`)", "",
             "| records | replayed | same reward and components | largest difference |", "| --- | ---: | ---: | ---: |"]
    total = same = 0
    differing = []
    for path in record_files(records):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = rows[: args.limit] if args.limit else rows
        found = compare(rows, replay(env, rows))
        total, same = total + found["records"], same + found["same"]
        differing += [{"file": path.relative_to(records).as_posix(), **d} for d in found["differing"]]
        lines.append(f"| {path.relative_to(records).as_posix()} | {found['records']} | {found['same']} | "
                     f"{found['largest_difference']:.3g} |")
        print(lines[-1], flush=True)
    lines += ["", f"**{same} of {total}** records replay to the same reward and components, bit for bit."]
    lines += [f"- {d['file']} {d['task_id']}: recorded {d['recorded']!r}, replayed {d['replayed']!r} {d['error']}"
              for d in differing[:20]]
    lines += ["", f"Command: `python -m benchmarks.learning.replay {args.bench.as_posix()}"
              + (f" --limit {args.limit}" if args.limit else "") + "`", f"Code: {code_version()}",
              f"Load at the start: `{load}`; at the end: `{uptime()}`.", ""]
    if args.out is not None:
        args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[-6:]))
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
