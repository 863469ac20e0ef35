"""``python -m benchmarks.perf.distributed_throughput``: training problems per second with 1 and 2 processes.

Trains MAGRPO on ``coop_basics-v0`` (embedded suite, no download but the model) for a few steps, once
per process count, each process launched as users launch it (``accelerate launch`` with
``configs/accelerate/ddp_one_node.yaml``; one process: ``python -m trainers train``). Every process
rolls out ``--problems-per-step`` problems per step, so N processes do N times the work per step;
the CPU's cores are split evenly between the processes (``OMP_NUM_THREADS``). The first step is a
warm-up and is not timed. problems/s = problems of the timed steps / their summed step time, where a
step's time is the slowest process's (``perf/step_s``).

The table, the command, the machine and its ``uptime`` before and after go to
``benchmarks/results/distributed_throughput.md`` (``--out`` elsewhere). On a busy machine the
numbers measure the load as much as the trainer: read the load average with them.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import uptime

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "distributed_throughput.md"
DDP_CONFIG = ROOT / "configs" / "accelerate" / "ddp_one_node.yaml"


def train_command(processes: int, overrides: list[str]) -> list[str]:
    if processes == 1:
        return [sys.executable, "-m", "trainers", "train", *overrides]
    return [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(DDP_CONFIG),
            "--num_processes", str(processes), "--main_process_port", "0", "-m", "trainers", "train", *overrides]


def measure(processes: int, args: argparse.Namespace, run_dir: Path) -> dict[str, float]:
    """Train ``args.steps`` steps on ``processes`` processes; problems/s over the steps after the first."""
    from trainers.metrics_log import read_metrics

    overrides = [
        "env=coop_basics-v0", f"model={args.model}", f"steps={args.steps}", f"problems_per_step={args.problems_per_step}",
        "group_size=4", f"sampling.max_new_tokens={args.max_new_tokens}", "eval_problems=0", "seed=0",
        "progress_bar=false", "tensorboard=false", "log_samples=0", f"run_dir={run_dir}", f"run_name=p{processes}",
        "overwrite=true",
    ]
    threads = max(len(os.sched_getaffinity(0)) // processes, 1)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(train_command(processes, overrides), capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{processes} process(es) failed:\n{done.stderr[-3000:]}")
    rows = [r for r in read_metrics(run_dir / f"p{processes}") if "perf/step_s" in r][1:]  # first: warm-up
    seconds = sum(r["perf/step_s"] for r in rows)
    problems = len(rows) * args.problems_per_step * processes
    return {"processes": processes, "threads": threads, "timed_steps": len(rows), "problems": problems,
            "seconds": seconds, "problems_per_s": problems / seconds if seconds else float("nan")}


def report(results: list[dict], args: argparse.Namespace, load_before: str, load_after: str) -> str:
    base = results[0]["problems_per_s"]
    lines = [
        "# Training throughput: 1 vs 2 processes (CPU)", "",
        f"Command: `python -m benchmarks.perf.distributed_throughput {shlex.join(sys.argv[1:])}`  ",
        f"Model `{args.model}`, coop_basics-v0, MAGRPO, G=4, {args.max_new_tokens} new tokens at most, "
        f"{args.problems_per_step} problem(s) per step per process, {args.steps} steps (first not timed).  ",
        f"Machine: {platform.processor() or platform.machine()}, {len(os.sched_getaffinity(0))} usable cores, "
        f"Linux {platform.release()}, Python {platform.python_version()}.  ",
        f"`uptime` before: {load_before}  ", f"`uptime` after: {load_after}", "",
        "| processes | threads each | timed steps | problems | seconds | problems/s | vs 1 process |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['processes']} | {r['threads']} | {r['timed_steps']} | {r['problems']} | {r['seconds']:.1f} "
                     f"| {r['problems_per_s']:.3f} | {r['problems_per_s'] / base:.2f}x |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="'default' (SmolLM2-135M-Instruct from the cache) or a path")
    parser.add_argument("--steps", type=int, default=4, help="training steps per run (the first is not timed)")
    parser.add_argument("--problems-per-step", type=int, default=2, help="per process")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be >= 2 (the first step is a warm-up)")
    load_before = uptime()
    with tempfile.TemporaryDirectory() as folder:
        results = []
        for processes in args.processes:
            started = time.perf_counter()
            results.append(measure(processes, args, Path(folder)))
            print(f"{processes} process(es): {results[-1]['problems_per_s']:.3f} problems/s "
                  f"({time.perf_counter() - started:.0f} s wall)", flush=True)
    text = report(results, args, load_before, uptime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
