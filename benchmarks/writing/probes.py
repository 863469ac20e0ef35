"""The table of reward-hacking probes x mean score, for both versions of both writing envs.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.probes

Runs every probe of the test suite (``benchmarks/writing/probe_cases.py``) on the 10 posts and 10 abstracts
that have genuine pairs (``benchmarks/writing/genuine.py``) and prints, per env version, the mean score,
the mean as a share of the genuine pairs' mean, and the highest score any source gave the probe
(the sentence-shuffle probes: over every source and every seed).
Deterministic; takes a few seconds.
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Callable

from llm_coop_envs.writing import arxiv_intro, tldr
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS
from benchmarks.writing.probe_cases import PROBES, SHUFFLE_SEEDS, SHUFFLES, Case, Pair

GENUINE = "genuine pair"


def cases(task, env: str) -> list[tuple[int, Case]]:
    """(problem index, case) for every source with a genuine pair; "other" is the next source's pair."""
    index = {task.task_id(i): i for i in range(len(task))}
    if env == "tldr":
        pairs = {tid: (task.items[index[tid]].reference, detail) for tid, detail in TLDR_DETAILS.items()}
    else:
        pairs = dict(ARXIV_PAIRS)
    ids = list(pairs)
    out = []
    for k, tid in enumerate(ids):
        item = task.items[index[tid]]
        out.append((index[tid], Case(env, pairs[tid], item.source, item.title, pairs[ids[(k + 1) % len(ids)]])))
    return out


def scores(task, env: str) -> dict[str, list[float]]:
    """Probe name -> the score on each source (the genuine pair first)."""
    probes: dict[str, Callable[[Case], Pair]] = {GENUINE: lambda c: c.genuine, **PROBES}
    for name, shuffle in SHUFFLES.items():
        for seed in SHUFFLE_SEEDS:
            probes[f"{name} (seed {seed})"] = lambda c, shuffle=shuffle, seed=seed: shuffle(c, seed)
    table: dict[str, list[float]] = {}
    for index, case in cases(task, env):
        for name, probe in probes.items():
            replies = dict(zip(task.agents, probe(case)))
            table.setdefault(name.split(" (seed ")[0], []).append(task.evaluate(index, replies).reward.total)
    return table


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        envs = {
            "tldr-v0": (tldr.env_v0(split="all").task, "tldr"),
            "tldr-v1": (tldr.env_v1(split="all").task, "tldr"),
            "tldr-v2": (tldr.env_v2(split="all").task, "tldr"),
            "arxiv_intro-v0": (arxiv_intro.env_v0(split="all").task, "arxiv"),
            "arxiv_intro-v1": (arxiv_intro.env_v1(split="all").task, "arxiv"),
            "arxiv_intro-v2": (arxiv_intro.env_v2(split="all").task, "arxiv"),
        }
    results = {name: (task.max_reward(), scores(task, env)) for name, (task, env) in envs.items()}
    print("Mean score over 10 sources (share of the genuine mean; highest on any source). Max: "
          + ", ".join(f"{name} {top:g}" for name, (top, _) in results.items()) + ".\n")
    print("| probe | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for probe in next(iter(results.values()))[1]:
        cells = []
        for _, table in results.values():
            values, genuine = table[probe], statistics.mean(table[GENUINE])
            cells.append(f"{statistics.mean(values):.2f} ({statistics.mean(values) / genuine:.0%}; ≤ {max(values):.2f})")
        seeds = f" ({len(SHUFFLE_SEEDS)} seeds; not checked by -v1)" if probe in SHUFFLES else ""
        print(f"| {probe}{seeds} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
