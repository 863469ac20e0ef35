"""Run the planned trainer and evaluation processes one after another: a crash stays in its process,
memory is freed between runs, a finished run (evaluated) is never run again, a trained one only
evaluated."""

from __future__ import annotations

import json
import shlex
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


def is_finished(runs_dir: Path, spec: RunSpec, eval_sets: Sequence[str] = ()) -> bool:
    """Trained and evaluated by the bench on the main held-out set and every extra one (or, for a run
    of an older bench, evaluated by its trainer)."""
    from benchmarks.learning.evaluation import DONE_FILE, records_folder

    run_dir = runs_dir / spec.name
    if (run_dir / "eval.json").is_file():
        return True
    return all((run_dir / records_folder(name) / DONE_FILE).is_file() for name in (None, *eval_sets))


def is_trained(runs_dir: Path, spec: RunSpec) -> bool:
    return (runs_dir / spec.name / "final").is_dir()


def run_all(specs: Sequence[RunSpec], commands: Sequence[list[str]], runs_dir: Path, *,
            timeout_s: float | None = None, quiet: bool = False,
            eval_commands: Sequence[Sequence[list[str]]] | None = None, eval_sets: Sequence[str] = (),
            max_runs: int | None = None) -> None:
    """Execute the unfinished runs in order (at most ``max_runs`` of them) with a progress bar (and
    ETA) over runs; each run's ``eval_commands`` entry (the bench's evaluations of its checkpoints, on
    the main held-out set and on each of ``eval_sets``) runs after its training."""
    from tqdm import tqdm

    runs_dir.mkdir(parents=True, exist_ok=True)
    evals = list(eval_commands) if eval_commands is not None else [()] * len(specs)
    todo = [(s, c, e) for s, c, e in zip(specs, commands, evals) if not is_finished(runs_dir, s, eval_sets)]
    finished_before = len(specs) - len(todo)
    todo = todo[:max_runs] if max_runs is not None else todo
    bar = tqdm(total=finished_before + len(todo), initial=finished_before, unit="run", file=sys.stderr, disable=quiet)
    try:
        for spec, command, evaluate in todo:
            bar.set_postfix_str(spec.name)
            outcome = run_one(spec, command, runs_dir, timeout_s, evaluate, eval_sets)
            bar.update(1)
            if not quiet:
                bar.write(f"{spec.name}: {outcome['status']} in {outcome['wall_s']:.0f} s")
    finally:
        bar.close()


def run_one(spec: RunSpec, command: list[str], runs_dir: Path, timeout_s: float | None,
            evaluate: Sequence[list[str]] = (), eval_sets: Sequence[str] = ()) -> dict:
    """One trainer process, then its evaluations, output in ``<runs_dir>/<name>.log``; ``<name>.run.json``
    says how it went. A run trained before (its ``final`` folder exists) is only evaluated; a folder
    left by an interrupted training is removed first: the trainer starts every run fresh."""
    log_path = runs_dir / f"{spec.name}.log"
    started = time.perf_counter()
    error, wall = "", None
    if not is_trained(runs_dir, spec):
        shutil.rmtree(runs_dir / spec.name, ignore_errors=True)
        error = run_process(command, log_path, timeout_s)
        wall = time.perf_counter() - started
    else:
        wall = read_outcome(runs_dir, spec).get("wall_s")
    for evaluation in evaluate:
        error = error or run_process(evaluation, log_path, timeout_s, append=True)
    outcome = {"name": spec.name, "command": portable_command(command), "wall_s": wall if wall is not None else time.perf_counter() - started}
    if not error and not is_finished(runs_dir, spec, eval_sets):
        error = "the run ended without held-out records (no eval.json, no bench evaluation)"
    outcome.update(status="failed" if error else "done", error=_with_log_tail(error, log_path))
    (runs_dir / f"{spec.name}.run.json").write_text(json.dumps(outcome, indent=2), encoding="utf-8")
    return outcome


def portable_command(command: Sequence[str]) -> str:
    """``command`` as results record it: ``python`` for this interpreter, paths inside the working folder
    relative to it, so that a committed result names no path of the machine that ran it."""
    here = Path.cwd()
    shown = []
    for arg in command:
        if arg == sys.executable:
            arg = "python"
        elif os.path.isabs(arg) and Path(arg).is_relative_to(here):
            arg = str(Path(arg).relative_to(here))
        shown.append(arg)
    return shlex.join(shown)


def run_process(command: list[str], log_path: Path, timeout_s: float | None, append: bool = False) -> str:
    """Run ``command`` with its output in ``log_path``; the error, or ``""``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a" if append else "w", encoding="utf-8") as log:
        # Its own process group, so that a timeout ends the process and everything it started.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            returncode = process.wait(timeout=timeout_s)
            return "" if returncode == 0 else f"exit status {returncode}"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return f"timed out after {timeout_s:.0f} s"
        except BaseException:  # Ctrl-C: do not leave the process running behind the benchmark
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise


def read_outcome(runs_dir: Path, spec: RunSpec) -> dict:
    path = runs_dir / f"{spec.name}.run.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _with_log_tail(error: str, log_path: Path) -> str:
    if not error:
        return ""
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
    return error + "; end of " + log_path.name + ":\n" + "\n".join(lines)
