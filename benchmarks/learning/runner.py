"""Run the planned trainer processes one after another: a crash stays in its process, memory is
freed between runs, a finished run (its ``eval.json`` exists) is never run again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.learning.plan import RunSpec

LOG_TAIL_LINES = 15


def is_finished(runs_dir: Path, spec: RunSpec) -> bool:
    return (runs_dir / spec.name / "eval.json").is_file()


def run_all(specs: Sequence[RunSpec], commands: Sequence[list[str]], runs_dir: Path, *,
            timeout_s: float | None = None, quiet: bool = False) -> None:
    """Execute every unfinished run in order with a progress bar (and ETA) over runs."""
    from tqdm import tqdm

    runs_dir.mkdir(parents=True, exist_ok=True)
    todo = [(s, c) for s, c in zip(specs, commands) if not is_finished(runs_dir, s)]
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), unit="run", file=sys.stderr, disable=quiet)
    try:
        for spec, command in todo:
            bar.set_postfix_str(spec.name)
            outcome = run_one(spec, command, runs_dir, timeout_s)
            bar.update(1)
            if not quiet:
                bar.write(f"{spec.name}: {outcome['status']} in {outcome['wall_s']:.0f} s")
    finally:
        bar.close()


def run_one(spec: RunSpec, command: list[str], runs_dir: Path, timeout_s: float | None) -> dict:
    """One trainer process, its output in ``<runs_dir>/<name>.log``; ``<name>.run.json`` says how it went.
    A folder left by an interrupted attempt is removed first: the trainer starts every run fresh."""
    shutil.rmtree(runs_dir / spec.name, ignore_errors=True)
    log_path = runs_dir / f"{spec.name}.log"
    started = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        # Its own process group, so that a timeout ends the trainer and everything it started.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            returncode = process.wait(timeout=timeout_s)
            error = "" if returncode == 0 else f"exit status {returncode}"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            error = f"timed out after {timeout_s:.0f} s"
        except BaseException:  # Ctrl-C: do not leave the trainer running behind the benchmark
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
    outcome = {"name": spec.name, "command": command, "wall_s": time.perf_counter() - started}
    if not error and not is_finished(runs_dir, spec):
        error = "the trainer exited without writing eval.json"
    outcome.update(status="failed" if error else "done", error=_with_log_tail(error, log_path))
    (runs_dir / f"{spec.name}.run.json").write_text(json.dumps(outcome, indent=2), encoding="utf-8")
    return outcome


def read_outcome(runs_dir: Path, spec: RunSpec) -> dict:
    path = runs_dir / f"{spec.name}.run.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _with_log_tail(error: str, log_path: Path) -> str:
    if not error:
        return ""
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
    return error + "; end of " + log_path.name + ":\n" + "\n".join(lines)
