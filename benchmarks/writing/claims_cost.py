"""What the -v5 checks add to a training step: the claim check and the text-job checks on G pairs of one source.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.claims_cost [--group 4] [--repeats 5]

A MAGRPO step on a writing env scores G joint samples of one problem (G pairs of texts on one source). For
each of the project's 20 genuine pairs (``genuine.py``), the G pairs here are the genuine pair with its
texts' sentences rotated (G different texts of realistic length, so the parser's cache never answers for
a later pair), scored once with :func:`check` and :mod:`.text_jobs` after the parser is loaded. Prints
the parser's load time (once per process) and the median over sources and repeats of the time per step
(every text of the G pairs, the source parsed anew each repeat: its cache is cleared).
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from benchmarks.writing.claims_heldout import pairs
from benchmarks.writing.text_jobs_check import problems
from llm_coop_envs.writing import claims, text_jobs


def rotated(text: str, k: int) -> str:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    k %= max(len(parts), 1)
    return " ".join(parts[k:] + parts[:k])


def step_seconds(pair: tuple[str, str], source: str, group: int) -> float:
    claims.parse.cache_clear()
    claims._all_stems.cache_clear()
    claims._loose_amounts_cached.cache_clear()
    started = time.perf_counter()
    for k in range(group):
        texts = tuple(rotated(text, k) + " " * k for text in pair)  # distinct strings: no cache hit
        for text in texts:
            claims.check(text, source)
            problems(text, source)
        text_jobs.coverage(texts, source)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    claims.pipeline()
    claims.check("A warm-up sentence.", "A warm-up source.")  # WordNet's files are read at the first antonym
    load = time.perf_counter() - started
    cases = pairs()
    times = [step_seconds(pair, source, args.group) for _ in range(args.repeats) for _, pair, source in cases]
    print(f"parser and WordNet load: {load:.2f} s (once per process)")
    print(f"per step ({args.group} pairs on one source, {len(cases)} sources x {args.repeats} repeats): median "
          f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
