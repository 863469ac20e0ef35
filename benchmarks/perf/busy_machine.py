"""``python -m benchmarks.perf.busy_machine``: a training step alone and on a busy machine.

The trainer step of :mod:`benchmarks.perf.trainer_step` (MAGRPO, 2 agents x G=4, SmolLM2-135M, LoRA,
fp32, a fixed number of new tokens) runs in a fresh process, timed over a few steps after a warm-up:

* **alone**;
* **beside one single-threaded CPU-bound process** (a Python busy loop);
* **beside a second training job of ours**, both started together with the same settings.

Each scenario runs under three thread policies: ``fixed`` (the old default: one torch thread per usable
core), ``auto`` (the new default: ``cpu_threads="auto"``, which sizes the thread pool before each
rollout and update to the cores that other processes leave free) and ``auto-passive`` (the same with
``OMP_WAIT_POLICY=PASSIVE``: idle threads sleep instead of spinning). The report gives each scenario's median step and its ratio to the same
policy's step alone. Results: ``benchmarks/results/busy_machine.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.perf.trainer_step import uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "busy_machine.md"
POLICIES = {
    "fixed": ({"OMP_WAIT_POLICY": None}, "usable"),
    "auto": ({"OMP_WAIT_POLICY": None}, "auto"),
    "auto-passive": ({"OMP_WAIT_POLICY": "PASSIVE"}, "auto"),
}
HOG = "while True:\n    pass\n"


def child(threads: str, tokens: int, steps: int) -> None:
    """Print one JSON line: the step times of a fresh trainer with ``cpu_threads=threads``."""
    from benchmarks.perf.trainer_step import our_trainer, time_ours
    from trainers.threads import usable_cores

    setting = usable_cores() if threads == "usable" else threads
    run_dir = tempfile.mkdtemp(prefix="llm-coop-bench-busy-")
    trainer = our_trainer(("helper", "main"), tokens, run_dir, cpu_threads=setting)
    time_ours(trainer)  # warm-up
    times, threads_used = [], []
    for _ in range(steps):
        metrics = trainer.train_step()
        trainer.step += 1
        times.append(metrics["perf/step_s"])
        threads_used.append(metrics.get("perf/threads"))
    print(json.dumps({"step_s": times, "threads": threads_used}), flush=True)


def _start_job(policy: str, tokens: int, steps: int) -> subprocess.Popen:
    overrides, threads = POLICIES[policy]
    env = dict(os.environ)
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    command = [sys.executable, "-m", "benchmarks.perf.busy_machine", "--child", threads,
               "--tokens", str(tokens), "--steps", str(steps)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _result(job: subprocess.Popen, timeout_s: float) -> dict | None:
    try:
        out, _ = job.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        job.kill()
        job.communicate()
        return None
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if job.returncode == 0 and lines else None


def scenario(name: str, policy: str, tokens: int, steps: int, timeout_s: float) -> list[dict | None]:
    """The results of the timed job(s) of one scenario (None: it did not finish within ``timeout_s``)."""
    hog = subprocess.Popen([sys.executable, "-c", HOG]) if name == "beside a CPU-bound process" else None
    try:
        jobs = [_start_job(policy, tokens, steps) for _ in range(2 if name == "beside a second training job" else 1)]
        deadline = time.monotonic() + timeout_s
        return [_result(job, max(deadline - time.monotonic(), 1)) for job in jobs]
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()


SCENARIOS = ("alone", "beside a CPU-bound process", "beside a second training job")


def report(command: str, uptimes: tuple[str, str], tokens: int, steps: int, timeout_s: float,
           results: dict[tuple[str, str], list[dict | None]]) -> str:
    import torch

    from trainers.threads import usable_cores

    lines = [
        "# A training step on a busy machine", "",
        f"Command: `{command}`", "",
        f"{usable_cores()} usable cores, torch {torch.__version__}. `uptime` at start: `{uptimes[0]}`; at end: `{uptimes[1]}`.", "",
        f"Each job: MAGRPO, 2 agents x G=4, SmolLM2-135M-Instruct fp32, LoRA r=8, exactly {tokens} new tokens per "
        f"reply; one warm-up step, then {steps} timed steps (median). `fixed`: torch threads = usable cores, "
        "OpenMP's default wait; `auto`: `cpu_threads=\"auto\"` (the default now); `auto-passive`: the same with "
        "`OMP_WAIT_POLICY=PASSIVE`. "
        f"A job that had not finished after {timeout_s:.0f} s is reported as such.", "",
        "| policy | scenario | step (median) | × alone | threads used |", "|---|---|---:|---:|---|",
    ]
    for policy in dict.fromkeys(policy for policy, _ in results):
        alone = results[(policy, "alone")][0]
        for name in SCENARIOS:
            for job, result in enumerate(results[(policy, name)]):
                label = name + (f" (job {job + 1})" if name == "beside a second training job" else "")
                if result is None:
                    lines.append(f"| {policy} | {label} | did not finish in {timeout_s:.0f} s | | |")
                    continue
                median = statistics.median(result["step_s"])
                ratio = f"{median / statistics.median(alone['step_s']):.2f}×" if alone else "n/a"
                lines.append(f"| {policy} | {label} | {median:.1f} s | {ratio} | {sorted(set(result['threads']))} |")
    lines += ["", "Targets: beside one CPU-bound process at most 2.5× alone; beside a second training job at most 3× "
              "(each job), with the new defaults."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per reply")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per job")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a scenario's jobs are stopped")
    parser.add_argument("--policies", nargs="+", choices=list(POLICIES), default=list(POLICIES))
    parser.add_argument("--out", default=str(RESULTS), help="results file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.tokens, args.steps)
        return 0
    command = "python -m benchmarks.perf.busy_machine " + " ".join(sys.argv[1:] if argv is None else argv)
    started = uptime()
    results = {}
    for policy in args.policies:
        for name in SCENARIOS:
            results[(policy, name)] = scenario(name, policy, args.tokens, args.steps, args.timeout)
            print(policy, name, results[(policy, name)], flush=True)
    text = report(command, (started, uptime()), args.tokens, args.steps, args.timeout, results)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
