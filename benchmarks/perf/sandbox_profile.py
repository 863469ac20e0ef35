"""Where the time of one `env.step` of the newest `humaneval` id goes (`sandbox_throughput.py --profile`).

Two views, medians over the problems, one step at a time on one warm interpreter (no overlap):

* the host: the env's own work around the sandbox (parsing the replies, assembling the program,
  the helper-use analysis, reward, details) against the sandbox round trip;
* inside one sandbox request: the phases the warm interpreter and the judge mark with
  `time.monotonic()` (facts["marks"], _judge.py), which shares its clock with the host (no time
  namespace), so the host's send and receive times bound the first and last phase.

After the reply the warm interpreter still waits for the judge to exit and sweeps the run's
processes; a lone request does not wait for that, the next one on the same interpreter does (the
first phase of the next request absorbs it).

A third view is the CPU each step costs, by process: with every core busy (several steps at a
time), throughput is the cores divided by this, not by the step's latency. Read from /proc (each
process's own CPU time and that of the children it reaped) and the machine's busy time over the
same steps, so what no process of ours accounts for (the kernel's own threads) shows too.
"""

from __future__ import annotations

import os
import resource
import statistics
import time

from llm_coop_envs.coding.judgement import judgement
from llm_coop_envs.sandbox import api
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.pool import get_pool

# (label, mark at the phase's start, mark at its end); "sent" and "answered" are the host's.
PHASES = [
    ("host -> the waiting run's child: request frame header read", "sent", "received"),
    ("the child reads the program, tells the forking side the limits", "received", "request_read"),
    ("the run's pid and descriptors passed to the judge", "request_read", "judge_started"),
    ("judge reads the tests frame", "judge_started", "tests_read"),
    ("judge unpacks the tests, runs the prompt's context (the child starts meanwhile)",
     "tests_read", "tests_compiled"),
    ("judge waits: the child sets the limits, runs the program (under isolate_tests, in the first "
     "test's child)", "tests_compiled", "program_ran"),
    ("judge runs the tests (calls to the child over the codec; under isolate_tests, the tests after "
     "the first each in a fresh child that runs the program again)", "program_ran", "tests_judged"),
    ("judge ends the run, collects output", "tests_judged", "facts_ready"),
    ("reply -> host (encode, pipe, decode)", "facts_ready", "answered"),
]


def _sandbox_phases(drafts: list, config) -> tuple[dict[str, list[float]], list[float]]:
    pool = get_pool(backends.resolve(config.backend), config.preload_modules,
                    config.max_file_mb, api.cores())
    worker = pool.acquire()
    phases: dict[str, list[float]] = {label: [] for label, _, _ in PHASES}
    totals = []
    healthy = False
    try:
        for draft in drafts:
            program, tests, entry_point, context = draft.jobs[0]
            frames = api.encode_request(program, tests, entry_point, config, context)
            sent = time.monotonic()
            worker.send(frames)
            facts = worker.receive(sent + config.timeout_s + 10)
            marks = {**facts["marks"], "sent": sent, "answered": time.monotonic()}
            totals.append(marks["answered"] - sent)
            for label, start, end in PHASES:
                if start in marks and end in marks:
                    phases[label].append(marks[end] - marks[start])
        healthy = True
    finally:
        pool.release(worker, healthy)
    return phases, totals


def _host_work(env, task_ids: list[str], problems: dict, helper: str) -> dict[str, list[float]]:
    """The env's work around the sandbox, and the whole env.step, one step at a time."""
    task = env.task
    times: dict[str, list[float]] = {"env.step, whole": [], "sandbox round trip (run_tests)": [],
                                     "parse + assemble the program": [],
                                     "helper use, reward, details": []}
    for task_id in task_ids:
        problem = problems[task_id]
        replies = {"helper": helper, "main": problem["prompt"] + problem["canonical_solution"]}
        env.reset(options={"task_id": task_id})
        index = env._episode.index
        started = time.perf_counter()
        env.step(replies)
        stepped = time.perf_counter()
        draft = task._draft(index, replies["helper"], replies["main"])
        drafted = time.perf_counter()
        program, tests, entry_point, context = draft.jobs[0]
        result = api.run_tests(program, tests, entry_point, task.sandbox, context=context)
        ran = time.perf_counter()
        verdict = draft.verdict(result)
        details = judgement(verdict)
        task._evaluation(verdict, details, task.reward.score_many([verdict], [details])[0], {})
        done = time.perf_counter()
        times["env.step, whole"].append(stepped - started)
        times["parse + assemble the program"].append(drafted - stepped)
        times["sandbox round trip (run_tests)"].append(ran - drafted)
        times["helper use, reward, details"].append(done - ran)
    return times


_TICK = os.sysconf("SC_CLK_TCK")
HOST, JUDGE, FORKING, RUNS = ("host process (env.step, the caller's side)", "judge (the warm interpreter's first process)",
                              "forking side", "the runs (forked children, reaped by the forking side)")
NOT_OURS = "not ours (the kernel's threads, other jobs)"


def _sandbox_roles() -> dict[int, str]:
    """The warm interpreters' long-lived processes below this one: pid -> judge or forking side."""
    parents, zygotes = {}, set()
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            parents[int(name)] = _stat(int(name))[0]
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(arg.endswith(b"_zygote.py") for arg in argv) and not os.path.basename(argv[0]).startswith(b"bwrap"):
            zygotes.add(int(name))
    # A judge's parent is bwrap or this process; a forking side's is a judge; the runs' (and the
    # child waiting for the next request) is a forking side.
    judges = {pid for pid in zygotes if parents[pid] not in zygotes and _below(pid, os.getpid(), parents)}
    forking = {pid for pid in zygotes if parents[pid] in judges}
    return {**dict.fromkeys(judges, JUDGE), **dict.fromkeys(forking, FORKING)}


def _stat(pid: int) -> tuple[int, float, float]:
    """(parent, own CPU seconds, CPU seconds of the children it reaped)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK, (int(fields[13]) + int(fields[14])) / _TICK


def _below(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    while pid in parents and pid != ancestor:
        pid = parents[pid]
    return pid == ancestor


def _cpu_now(roles: dict[int, str]) -> dict[str, float]:
    cpu = dict.fromkeys([JUDGE, FORKING, RUNS], 0.0)
    for pid, role in roles.items():
        _, own, reaped = _stat(pid)
        cpu[role] += own if role == FORKING else own + reaped
        cpu[RUNS] += reaped if role == FORKING else 0.0
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    cpu["machine"] = (sum(ticks) - ticks[3] - ticks[4]) / _TICK  # all but idle and iowait
    return cpu


def _cpu_rows(env, task_ids: list[str], problems: dict, helper: str) -> list[str]:
    """Mean CPU per step by process over one pass of env.step, one step at a time (the kernel counts
    CPU in 10 ms ticks: a pass of 164 steps, not a single step, is what can be read)."""
    roles = _sandbox_roles()
    before, usage, started = _cpu_now(roles), resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for task_id in task_ids:
        env.reset(options={"task_id": task_id})
        env.step({"helper": helper, "main": problems[task_id]["prompt"] + problems[task_id]["canonical_solution"]})
    wall, host = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
    time.sleep(0.1)  # the last run exits and is reaped after its reply
    after = _cpu_now(roles)
    steps = len(task_ids)
    per_step = {role: (after[role] - before[role]) / steps for role in (JUDGE, FORKING, RUNS)}
    per_step = {HOST: (host.ru_utime + host.ru_stime - usage.ru_utime - usage.ru_stime) / steps, **per_step}
    busy = (after["machine"] - before["machine"]) / steps
    per_step[NOT_OURS] = busy - sum(per_step.values())
    return [f"| {role} | {seconds * 1000:.2f} | {100 * seconds / busy:.0f} % |" for role, seconds in per_step.items()] + [
        f"| the machine, busy (wall: {wall / steps * 1000:.2f} ms per step) | {busy * 1000:.2f} | 100 % |"]


def _rows(times: dict[str, list[float]], whole: float) -> list[str]:
    lines = []
    for label, values in times.items():
        if values:
            median = statistics.median(values)
            lines.append(f"| {label} | {median * 1000:.2f} | {100 * median / whole:.0f} % |")
    return lines


def profile_env_step(problems: dict, helper: str) -> str:
    """The two profile tables, as Markdown."""
    import llm_coop_envs

    from benchmarks.perf.sandbox_throughput import newest_humaneval_id

    env_id = newest_humaneval_id()
    env = llm_coop_envs.make(env_id, split="all")
    task_ids = list(problems)
    env.reset(options={"task_id": task_ids[0]})
    _host_work(env, task_ids[:3], problems, helper)  # warm-up: pool started, caches filled
    host = _host_work(env, task_ids, problems, helper)
    task = env.task
    drafts = []
    for task_id in task_ids:
        problem = problems[task_id]
        env.reset(options={"task_id": task_id})
        drafts.append(task._draft(env._episode.index, helper, problem["prompt"] + problem["canonical_solution"]))
    phases, totals = _sandbox_phases(drafts, task.sandbox or api.DEFAULT_CONFIG)
    cpu = _cpu_rows(env, task_ids, problems, helper)
    step = statistics.median(host["env.step, whole"])
    trip = statistics.median(totals)
    header = ["| part | ms, median | share |", "|---|---:|---:|"]
    return "\n".join(
        [f"## Profile: one env.step of {env_id} ({len(task_ids)} problems, one at a time)", "",
         "Medians over the problems, one step at a time on one warm interpreter (see "
         "`benchmarks/perf/sandbox_profile.py`). The host's view (shares of the whole step):", ""]
        + header + _rows(host, step)
        + ["", f"Inside one sandbox request (shares of the round trip, median {trip * 1000:.2f} ms):", ""]
        + header + _rows(phases, trip)
        + ["", f"CPU per step by process, means over one pass of the {len(task_ids)} steps (the step's "
           "own work and what each process does after the reply, such as a run's exit; the programs' "
           "and tests' own work is in the runs' and the judge's rows):", "",
           "| process | CPU ms per step, mean | share |", "|---|---:|---:|"] + cpu)
