"""Where the time of one `env.step` of `humaneval-v0` goes (`sandbox_throughput.py --profile`).

Two views, medians over the problems, one step at a time on one warm interpreter (no overlap):

* the host: the env's own work around the sandbox (parsing the replies, assembling the program,
  the helper-use analysis, reward, details) against the sandbox round trip;
* inside one sandbox request: the phases the warm interpreter and the judge mark with
  `time.monotonic()` (facts["marks"], _judge.py), which shares its clock with the host (no time
  namespace), so the host's send and receive times bound the first and last phase.

After the reply the warm interpreter still waits for the judge to exit and sweeps the run's
processes; a lone request does not wait for that, the next one on the same interpreter does (the
first phase of the next request absorbs it).
"""

from __future__ import annotations

import statistics
import time

from llm_coop_envs.sandbox import api
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.pool import get_pool

# (label, mark at the phase's start, mark at its end); "sent" and "answered" are the host's.
PHASES = [
    ("host -> warm interpreter: request frame read", "sent", "received"),
    ("forking side: run uid, scratch, forks the run's child (+ channel, pipes)", "received",
     "child_forked"),
    ("the run's pid and descriptors passed to the judge", "child_forked", "judge_started"),
    ("judge reads the tests frame", "judge_started", "tests_read"),
    ("judge unpacks the tests, runs the prompt's context (the child starts meanwhile)",
     "tests_read", "tests_compiled"),
    ("judge waits: the child starts, confines itself, runs the program", "tests_compiled", "program_ran"),
    ("judge runs the tests (calls to the child over the codec)", "program_ran", "tests_judged"),
    ("judge ends the run, collects output", "tests_judged", "facts_ready"),
    ("reply -> host (encode, pipe, decode)", "facts_ready", "answered"),
]


def _sandbox_phases(drafts: list, config) -> tuple[dict[str, list[float]], list[float]]:
    pool = get_pool(backends.resolve(config.backend), config.preload_modules,
                    config.max_file_mb * 2 + 8, api.cores())
    worker = pool.acquire()
    phases: dict[str, list[float]] = {label: [] for label, _, _ in PHASES}
    totals = []
    healthy = False
    try:
        for draft in drafts:
            program, tests, entry_point, context = draft.job
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
        program, tests, entry_point, context = draft.job
        result = api.run_tests(program, tests, entry_point, task.sandbox, context=context)
        ran = time.perf_counter()
        verdict = draft.verdict(result)
        task._evaluation(verdict, task.reward.score_many([verdict])[0], {})
        done = time.perf_counter()
        times["env.step, whole"].append(stepped - started)
        times["parse + assemble the program"].append(drafted - stepped)
        times["sandbox round trip (run_tests)"].append(ran - drafted)
        times["helper use, reward, details"].append(done - ran)
    return times


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

    env = llm_coop_envs.make("humaneval-v0", split="all")
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
    step = statistics.median(host["env.step, whole"])
    trip = statistics.median(totals)
    header = ["| part | ms, median | share |", "|---|---:|---:|"]
    return "\n".join(
        [f"## Profile: one env.step of humaneval-v0 ({len(task_ids)} problems, one at a time)", "",
         "Medians over the problems, one step at a time on one warm interpreter (see "
         "`benchmarks/perf/sandbox_profile.py`). The host's view (shares of the whole step):", ""]
        + header + _rows(host, step)
        + ["", f"Inside one sandbox request (shares of the round trip, median {trip * 1000:.2f} ms):", ""]
        + header + _rows(phases, trip))
