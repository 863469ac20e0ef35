"""``python -m benchmarks.perf``: run the performance benchmarks and collect them in one results file.

Each benchmark is a module of this package run as ``python -m benchmarks.perf.<name>`` in its own
process (so one benchmark's threads, pools or memory never skew the next). A benchmark that does
not exist yet is skipped with a note. ``benchmarks/results/perf.md`` gets, per benchmark, its
exact command, exit status, duration, the results files it wrote, and the tail of its output.

    python -m benchmarks.perf                 # all benchmarks
    python -m benchmarks.perf --only sandbox_throughput --quick
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.machine import machine_info

RESULTS = Path(__file__).resolve().parents[1] / "results"
BENCHMARKS = {
    "sandbox_throughput": "tests per second of the sandbox backends, side by side",
    "trainer_step": "seconds per training step, generation vs loss",
    "problems_per_step": "joint samples per minute and tokens per second at 1, 2, 4 and 8 problems per step",
    "busy_machine": "a training step alone, beside a CPU-bound process and beside a second training job",
    "eval_speed": "the held-out evaluation's time, batched and one problem at a time",
    "update_profile": "the update's matrix products against the machine's own matrix speed",
    "step_floor": "a training step's kernels alone (its floor) against the step and TRL's step",
    "top_p_cost": "nucleus (top-p) filtering by a full sort against candidates, alone and in a training step",
}


@dataclasses.dataclass
class Outcome:
    name: str
    command: str
    status: str
    """"ok", "failed (exit N)", "timed out" or "skipped: <why>"."""
    seconds: float = 0.0
    written: list[str] = dataclasses.field(default_factory=list)
    output_tail: str = ""


def run_benchmark(name: str, extra_args: Sequence[str], timeout_s: float) -> Outcome:
    module = f"benchmarks.perf.{name}"
    command = [sys.executable, "-m", module, *extra_args]
    shown = shlex.join(["python", "-m", module, *extra_args])
    if importlib.util.find_spec(module) is None:
        return Outcome(name, shown, "skipped: the benchmark does not exist yet")
    started_wall, started = time.time(), time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as error:
        status, output = "timed out", _text(error.stdout) + _text(error.stderr)
    written = sorted(str(p.relative_to(RESULTS.parent.parent)) for p in RESULTS.rglob("*") if p.is_file() and p.stat().st_mtime >= started_wall and p.name != "perf.md")
    return Outcome(name, shown, status, time.perf_counter() - started, written, _without_progress_bars(output)[-3000:])


def _without_progress_bars(output: str) -> str:
    lines = output.replace("\r", "\n").splitlines()
    return "\n".join(line for line in lines if "%|" not in line and line.strip())


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def render(outcomes: Sequence[Outcome], command: str) -> str:
    lines = [
        "# Performance benchmarks",
        "",
        f"Collected by `{command}` on {machine_info()}.",
        "",
        "| benchmark | status | seconds | results files |",
        "| --- | --- | ---: | --- |",
    ]
    for o in outcomes:
        files = ", ".join(f"[{Path(f).name}]({Path(f).name})" for f in o.written) or "–"
        lines.append(f"| {o.name} | {o.status} | {o.seconds:.1f} | {files} |")
    for o in outcomes:
        lines += ["", f"## {o.name}", "", BENCHMARKS.get(o.name, ""), "", f"Command: `{o.command}`", ""]
        if o.output_tail.strip():
            lines += ["```text", o.output_tail.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHMARKS), help="run only these benchmarks")
    parser.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                        help="extra arguments for one benchmark, e.g. --args 'trainer_step=--steps 2'")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per benchmark")
    parser.add_argument("--out", default=str(RESULTS / "perf.md"))
    args = parser.parse_args(argv)
    extra = dict(item.partition("=")[::2] for item in args.args)
    outcomes = [run_benchmark(name, shlex.split(extra.get(name, "")), args.timeout) for name in (args.only or BENCHMARKS)]
    command = shlex.join(["python", "-m", "benchmarks.perf", *(argv if argv is not None else sys.argv[1:])])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(outcomes, command), encoding="utf-8")
    for o in outcomes:
        print(f"{o.name}: {o.status} ({o.seconds:.1f} s)")
    print(f"Wrote {out}")
    return 0 if all(o.status == "ok" or o.status.startswith("skipped") for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
