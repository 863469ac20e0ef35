"""Does the untrained pair get a signal from a ``-v5`` writing reward? Read from an evaluation's samples.

    llm-coop eval tldr-v5 --split train --methods env -n 4 --problems 25 --temperature 0.6 --top-p 0.6 \\
        --max-new-tokens 128 --seed 0 --out runs/calibration_v5/tldr-v5
    PYTHONPATH=. python -m benchmarks.writing.signal_v5 runs/calibration_v5/tldr-v5/episodes.jsonl --env tldr-v5

The evaluation samples G = 4 pairs per problem from the default model at the training settings; this reads
them back and reports, per role, the share of samples whose text passes every one of its own gates
(``chain.gated``: the table the structure level, each role's reward and the credit read; the bar is 20 %),
the share of groups whose reward varies (the bar is half), which gates fail most, and how many samples fail
only one gate (what relaxing that gate alone would add). No model: the gates
need none, the rewards are the evaluation's.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import warnings

from trainers.metrics_log import read_jsonl


def measure(path: str, env_id: str) -> dict:
    import llm_coop_envs
    from llm_coop_envs.writing.chain import gated

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(env_id, split="all").task
    index = {task.task_id(i): i for i in range(len(task))}
    episodes = [e for e in read_jsonl(path) if e.get("method") == "env"]
    passing, failing, groups = collections.Counter(), collections.Counter(), collections.defaultdict(list)
    but_one = collections.Counter()  # (role, gate): every gate passed but that one (what relaxing it would give)
    for episode in episodes:
        table = gated(task.pair(index[episode["task_id"]], episode["replies"]), task.config).table
        for role, by_gate in table.items():
            passing[role] += all(by_gate.values())
            failed = [name for name, ok in by_gate.items() if not ok]
            failing.update(f"{role}: {name}" for name in failed)
            if len(failed) == 1:
                but_one[f"{role}: {failed[0]}"] += 1
        groups[episode["task_id"]].append(float(episode["reward"]))
    varied = sum(len(set(rewards)) > 1 for rewards in groups.values())
    return {
        "samples": len(episodes), "groups": len(groups),
        "passes_all_own_gates": {role: round(count / len(episodes), 4) for role, count in passing.items()},
        "groups_with_varied_reward": round(varied / len(groups), 4) if groups else 0.0,
        "mean_reward": round(statistics.mean(float(e["reward"]) for e in episodes), 4) if episodes else 0.0,
        "most_failed_gates": dict(failing.most_common(12)),
        "fail_only_this_gate": dict(but_one.most_common(8)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("episodes")
    parser.add_argument("--env", default="tldr-v5")
    parser.add_argument("--out", help="also write the result here (JSON)")
    args = parser.parse_args(argv)
    result = measure(args.episodes, args.env)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
