"""Does the writing reward's model read the same through the engine as through transformers' forward?

    LLM_COOP_DATA_DIR=... python -m benchmarks.writing.reader_agreement benchmarks/results/learning/tldr-v4

The records of a committed writing bench are replayed (:mod:`benchmarks.learning.replay`) twice in one
process: once with the reward's model reading through the project's engine (what every model the owned
module covers does), once through transformers' forward (what any other model does). Every replayed
reward and reward component is compared, bit for bit; then every distinct request the replay sent to the
model is scored again by a fresh reader of each kind, in the same batches, and each token's
log-probability compared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.learning.replay import held_out_env, record_files, replay
from benchmarks.machine import code_version, uptime
from llm_coop_envs.writing import lm


class _Recording(lm.LanguageModel):
    """A reader that keeps every request it is asked, and reads through ``engine`` or not."""

    def __init__(self, *args, engine: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.use_engine, self.requests = engine, []

    def _load(self) -> None:
        super()._load()
        if not self.use_engine:
            self._engine = None

    def score(self, requests):
        self.requests.extend(requests)
        return super().score(requests)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path, help="a committed writing bench folder (holding records/bench.json)")
    args = parser.parse_args(argv)
    records = args.bench / "records"
    bench = json.loads((records / "bench.json").read_text(encoding="utf-8"))
    load = uptime()
    replayed, readers = {}, {}
    for kind in ("engine", "transformers"):
        readers[kind] = _Recording("default", engine=kind == "engine")
        lm.LanguageModel._instances["default"] = readers[kind]  # the env's reader of the default model
        env, _ = held_out_env(bench)
        rows = [json.loads(line) for path in record_files(records)
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        replayed[kind] = replay(env, rows)
    lm.LanguageModel._instances.pop("default", None)
    same = sum(a == b for a, b in zip(replayed["engine"], replayed["transformers"]))
    requests = list(dict.fromkeys(readers["engine"].requests))
    scores, seconds = {}, {}
    for kind in ("engine", "transformers"):
        fresh = _Recording("default", engine=kind == "engine")
        started = time.perf_counter()
        scores[kind] = fresh.score(requests)
        seconds[kind] = time.perf_counter() - started
    pairs = list(zip(scores["engine"], scores["transformers"]))
    identical = sum(a == b for a, b in pairs)
    gap = max((abs(x - y) for a, b in pairs for x, y in zip(a.logprobs, b.logprobs)), default=0.0)
    tokens = sum(len(a) for a, _ in pairs)
    print(f"# The writing reader, engine against transformers' forward ({bench['env']} records)\n")
    print(f"- replayed rewards and components the same, bit for bit: **{same} of {len(rows)}**")
    print(f"- token scores of the {len(requests)} distinct requests, a fresh reader each, the same batches: "
          f"**{identical} of {len(requests)}** identical ({tokens:,} tokens, largest difference {gap:.3g}); "
          f"the engine {seconds['engine']:.1f} s, transformers' forward {seconds['transformers']:.1f} s")
    print(f"\nCommand: `python -m benchmarks.writing.reader_agreement {args.bench.as_posix()}`  \nCode: {code_version()}  \n"
          f"Load at the start: `{load}`; at the end: `{uptime()}`.")
    return 0 if same == len(rows) and identical == len(requests) else 1


if __name__ == "__main__":
    sys.exit(main())
