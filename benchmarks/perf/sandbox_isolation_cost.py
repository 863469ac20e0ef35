"""What the sandbox's isolation costs: the same sandbox work timed on this checkout and on an
earlier one (before a change of isolation), interleaved in one run, so that the ratio is formed
under the same load.

    git worktree add ../before <commit>
    PYTHONPATH=. python benchmarks/perf/sandbox_isolation_cost.py --before ../before \
        [--backend subprocess] [--repeats 5] [--programs 300] [--out PATH]

For each checkout (a fresh interpreter each, importing that checkout's package) it measures: the
first run of a new pool (starting two warm interpreters: where the once-per-interpreter namespaces
are made), a batch of trivial programs on two warm interpreters (programs/s: what a run pays in
throughput), and one program at a time (median latency: what a run pays in wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from benchmarks.machine import machine_info, uptime

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results",
                       "sandbox_isolation_cost.md")

# Run in a fresh interpreter with PYTHONPATH set to one checkout; prints one JSON object.
_MEASURE = """
import json, statistics, sys, time, warnings
warnings.simplefilter("ignore")
from llm_coop_envs.sandbox import SandboxConfig, run_tests, run_tests_batch
config = SandboxConfig(backend=sys.argv[1], timeout_s=3.0)
job = ("def add(a, b):\\n    return a + b\\n", ["assert add(1, 2) == 3"], "add")
n = int(sys.argv[2])
started = time.perf_counter()
first = run_tests_batch([job, job], config, workers=2)
cold_s = time.perf_counter() - started
started = time.perf_counter()
batch = run_tests_batch([job] * n, config, workers=2)
batch_s = time.perf_counter() - started
latencies = []
for _ in range(n // 3):
    started = time.perf_counter()
    one = run_tests(*job, config)
    latencies.append(time.perf_counter() - started)
passed = sum(r.passed for r in first + batch) + one.passed
print(json.dumps({"cold_ms": cold_s * 1e3, "batch_per_s": n / batch_s,
                  "latency_ms": statistics.median(latencies) * 1e3, "passed": passed,
                  "expected": n + 3, "isolation": list(getattr(one, "isolation", ())),
                  "backend": one.backend}))
"""

METRICS = (("cold_ms", "first run of a new pool (two warm interpreters start), ms", False),
           ("batch_per_s", "batch on two warm interpreters, programs/s", True),
           ("latency_ms", "one program at a time, median latency, ms", False))


def measure(checkout: str, backend: str, programs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
    done = subprocess.run([sys.executable, "-c", _MEASURE, backend, str(programs)], env=env,
                          capture_output=True, text=True, timeout=600, cwd=os.path.abspath(checkout))
    if done.returncode != 0:
        raise RuntimeError(f"measuring {checkout} failed: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["passed"] != result["expected"]:
        raise RuntimeError(f"{checkout}: {result['passed']}/{result['expected']} honest programs passed")
    return result


def _row(label: str, before: list[float], after: list[float], higher_is_better: bool) -> str:
    ratios = [a / b for a, b in zip(after, before)]
    return (f"| {label} | {statistics.median(before):.1f} | {statistics.median(after):.1f} | "
            f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}–{max(ratios):.2f}) | "
            f"{'higher' if higher_is_better else 'lower'} is better |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="a checkout of the earlier commit")
    parser.add_argument("--backend", default="subprocess", choices=("subprocess", "bwrap"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    load_start = uptime()
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for repeat in range(args.repeats):  # interleaved: load drifts alike for both
        for side, checkout in (("before", args.before), ("after", ".")):
            runs[side].append(measure(checkout, args.backend, args.programs))
            print(f"repeat {repeat + 1}/{args.repeats} {side}: {runs[side][-1]}", flush=True)
    lines = ["| measure | before, median | after, median | after / before, median (range) | |",
             "|---|---:|---:|---:|---|"]
    lines += [_row(label, [r[key] for r in runs["before"]], [r[key] for r in runs["after"]], better)
              for key, label, better in METRICS]
    table = "\n".join(lines)
    print(table)
    before_commit = subprocess.run(["git", "-C", args.before, "rev-parse", "--short", "HEAD"],
                                   capture_output=True, text=True).stdout.strip() or "unknown"
    text = (f"# What the sandbox's isolation costs a run\n\n"
            f"Command (repository root; `before` is a worktree of commit {before_commit}): "
            f"`PYTHONPATH=. python benchmarks/perf/sandbox_isolation_cost.py --before <worktree>"
            f" --backend {args.backend} --repeats {args.repeats} --programs {args.programs}`\n\n"
            f"Machine: {machine_info()}.\n\n"
            f"Load: `{load_start}` at the start, `{uptime()}` at the end.\n\n"
            f"Backend `{args.backend}`. Isolation held, before: "
            f"{', '.join(runs['before'][0]['isolation']) or 'not recorded by that version'}; after: "
            f"{', '.join(runs['after'][0]['isolation'])}. {args.repeats} repeats, each measuring "
            f"before then after in fresh interpreters; {args.programs} trivial programs per batch, "
            f"{args.programs // 3} one at a time.\n\n{table}\n")
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
