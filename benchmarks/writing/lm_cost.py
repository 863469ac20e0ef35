"""What the ``-v3`` language-model levels cost per step when every pair reaches the model (the upper bound).

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.lm_cost [--group 4] [--repeats 3] [--words 95]

Times ``task.evaluate_many`` (what ``step`` of G env copies runs: one batched model pass over the
group's texts, the source read once) for G distinct pairs on one source that pass every gate before
the model: each pair is the genuine pair with its texts lengthened to about ``--words`` words (about
128 tokens, the bench's reply length) by whole sentences of other genuine texts, so the model reads
G x 2 full-length texts. Each repeat is a new source and a fresh cache. The same evaluation on
``-v2`` runs in the same process for comparison. Prints seconds per step, tokens through the model,
and ``uptime``. :mod:`benchmarks.writing.step_cost` measures a whole MAGRPO step side by side.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
import warnings

from benchmarks.writing.hostile import cases, sentences
from llm_coop_envs.writing.lm_levels import requests_if_scored


def lengthen(text: str, others: list[str], words: int) -> str:
    """``text`` followed by whole sentences of ``others`` until it has about ``words`` words."""
    out = [text]
    for sentence in (s for other in others for s in sentences(other)):
        if len(" ".join(out).split()) >= words:
            break
        out.append(sentence)
    return " ".join(out)


def group(found, k: int, size: int, words: int, kind: str = "tldr") -> list[tuple[str, str]]:
    """G distinct full-length pairs for the k-th source."""
    _, case = found[k % len(found)]
    pairs = []
    for j in range(size):
        others = [found[(k + j + m + 1) % len(found)][1].genuine[1] for m in range(3)]
        # a TL;DR / background of about 40 % of the detail / methods text: the length ratio is in band
        first = words if kind == "arxiv" else (2 * words) // 5
        pairs.append((lengthen(case.genuine[0], others, first), lengthen(case.genuine[1], others[::-1], words)))
    return pairs


def time_env(env_id: str, size: int, repeats: int, words: int) -> tuple[list[float], int, int]:
    import llm_coop_envs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(env_id, split="all").task
    kind = "tldr" if env_id.startswith("tldr") else "arxiv"
    index = {task.task_id(i): i for i in range(len(task))}
    found = cases(kind, task)
    if task.lm is not None:  # load the model outside the timing (once per process)
        task.lm.score([("", "warm", " up")])
    times, tokens, scored = [], getattr(task.lm, "forward_tokens", 0), 0  # scored: pairs sent to the model
    for k in range(repeats):
        task_id = found[k % len(found)][0]
        items = [(index[task_id], dict(zip(task.agents, pair))) for pair in group(found, k, size, words, kind)]
        if task.lm is not None:
            task.lm._cache.clear()
            task.lm._contexts.clear()
        start = time.perf_counter()
        task.evaluate_many(items)
        times.append(time.perf_counter() - start)
        if task.lm is not None:
            scored += sum(bool(requests_if_scored(task.pair(i, r), task.config)) for i, r in items)
    return times, getattr(task.lm, "forward_tokens", 0) - tokens, scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["tldr-v2", "tldr-v4", "arxiv_intro-v2", "arxiv_intro-v4"])
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--words", type=int, default=95, help="about 128 tokens")
    args = parser.parse_args()
    print("uptime at start:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rows = []
    for env_id in args.envs:
        times, tokens, scored = time_env(env_id, args.group, args.repeats, args.words)
        rows.append((env_id, times, tokens, scored))
    print("uptime at end:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), "\n")
    print("| env | seconds per step of G pairs (median (range) of repeats) | tokens through the model per step | pairs the model read |")
    print("|---|---|---|---|")
    for env_id, times, tokens, scored in rows:
        print(f"| {env_id} | {statistics.median(times):.2f} ({min(times):.2f}–{max(times):.2f}), G = {args.group} | "
              f"{tokens // args.repeats} | {scored} of {args.group * args.repeats} |")


if __name__ == "__main__":
    main()
