"""What the ``-v3`` language-model levels cost per step: one group of G pairs on one source, cold cache.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.lm_cost [--group 4] [--repeats 3]

Times ``task.evaluate_many`` (what ``step`` of G env copies runs: one batched model pass over the
group's texts, the source read once) for G pairs made from the genuine pairs of the first sources
(the genuine pair, it with appended instructions, reversed with ';', another source's pair: all pass the
structure gates, so the model reads them all), each repeat on a new source so no cache helps, and the
same evaluation on ``-v2`` for comparison. Prints seconds per step and tokens through the model.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from benchmarks.writing.hostile import FAMILIES, cases


def group(case, size: int) -> list[tuple[str, str]]:
    makers = [lambda c: c.genuine, FAMILIES["appended instructions"], FAMILIES["reversed with ';'"],
              FAMILIES["another source's pair"]]
    return [makers[k % len(makers)](case) for k in range(size)]


def time_env(env_id: str, size: int, repeats: int) -> tuple[list[float], int]:
    import llm_coop_envs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(env_id, split="all").task
    kind = "tldr" if env_id.startswith("tldr") else "arxiv"
    index = {task.task_id(i): i for i in range(len(task))}
    found = cases(kind, task)
    if task.lm is not None:  # load the model outside the timing (once per process)
        task.lm.score([("", "warm", " up")])
    times, tokens = [], getattr(task.lm, "forward_tokens", 0)
    for k in range(repeats):
        task_id, case = found[k % len(found)]
        items = [(index[task_id], dict(zip(task.agents, pair))) for pair in group(case, size)]
        start = time.perf_counter()
        task.evaluate_many(items)
        times.append(time.perf_counter() - start)
    return times, getattr(task.lm, "forward_tokens", 0) - tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["tldr-v2", "tldr-v3", "arxiv_intro-v2", "arxiv_intro-v3"])
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| env | seconds per step of G pairs (median of repeats) | tokens through the model per step |\n|---|---|---|")
    for env_id in args.envs:
        times, tokens = time_env(env_id, args.group, args.repeats)
        print(f"| {env_id} | {statistics.median(times):.2f} (G = {args.group}) | {tokens // args.repeats} |")


if __name__ == "__main__":
    main()
