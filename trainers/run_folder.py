"""A run's folder: never reused by accident, trimmed back to its checkpoint on resume.

A folder that holds results (metrics, checkpoints, evaluations, final weights) belongs to a run. A new
run with the same name refuses to start unless it resumes that run (``resume=true``, ``--resume``)
or is told to replace it (``overwrite=true``). Resuming needs a checkpoint: a run whose checkpoints
are gone but whose results are not is refused too (starting it again from step 0 would replace its
evaluations, metrics and final weights), unless ``overwrite=true`` asks for that. Without a
``run_name`` every run gets a fresh ``<algo>-<date>-<time>`` folder.

Every start of a run (a fresh one or a resume) adds a line to ``starts.jsonl`` before anything else runs:
the step it starts from and the run's record (model, env, algorithm, and the code that runs: source hash,
git commit and dirty flag, a plug-in's hash). A run that stops before its first evaluation or
checkpoint still says what code it ran, and a resumed run says what code each part ran.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

START_FILE = "starts.jsonl"
RESULTS = ("metrics.jsonl", "samples.jsonl", START_FILE, "checkpoints", "eval", "eval.json", "final", "tensorboard")
"""Everything a run writes in its folder (``overwrite`` removes exactly these)."""


class RunExistsError(FileExistsError):
    """The run folder already holds another run's results."""


def prepare_run_folder(run_dir: str, run_name: str | None, algo: str, *, resume: bool, overwrite: bool,
                       clear: bool = True) -> Path:
    """The folder of this run: a fresh timestamped one, or ``run_dir/run_name`` checked against reuse.
    ``clear=False`` (other ranks than the first) checks but never deletes."""
    if run_name is None:
        # an algorithm named as package.module:Class gives its class name (":" and "." make poor folder names)
        return _fresh(Path(run_dir), f"{algo.rpartition(':')[2]}-{time.strftime('%Y%m%d-%H%M%S')}")
    folder = Path(run_dir) / run_name
    found = [name for name in RESULTS if (folder / name).exists()]
    holds_results = any(_holds_results(folder / name) for name in found)
    if resume and (has_checkpoint(folder) or not holds_results):
        return folder  # a checkpoint to continue from, or nothing yet to lose
    if resume and not overwrite:
        raise RunExistsError(
            f"The run folder {folder} has no checkpoint to resume (checkpoints/ is missing or empty) but holds "
            f"results ({', '.join(name for name in found if _holds_results(folder / name))}): to start it again "
            f"from step 0 and replace them, add --overwrite (overwrite=true); or pick a fresh run_name."
        )
    if overwrite or not holds_results:
        # (a folder whose run never finished a step holds only empty logs: nothing to lose)
        if clear:
            for name in found:
                target = folder / name
                shutil.rmtree(target) if target.is_dir() else target.unlink()
        return folder
    raise RunExistsError(
        f"The run folder {folder} already holds a run ({', '.join(found)}). To continue it, pass "
        f"resume=true (llm-coop train --resume); to replace it, overwrite=true; or pick a fresh run_name."
    )


def holds_results(folder: Path) -> bool:
    """Whether a run folder holds anything a run produced (what ``overwrite`` would remove)."""
    return any((Path(folder) / name).exists() and _holds_results(Path(folder) / name) for name in RESULTS)


def has_checkpoint(folder: Path) -> bool:
    """Whether the run folder holds a finished checkpoint (``checkpoints/step-N``; a ``.partial`` one
    was interrupted while being written), as ``trainers.checkpoint.latest_checkpoint`` finds it."""
    root = Path(folder) / "checkpoints"
    return root.is_dir() and any(p.is_dir() and p.name.startswith("step-") and "." not in p.name for p in root.iterdir())


def _holds_results(path: Path) -> bool:
    if path.name in ("samples.jsonl", "tensorboard", START_FILE):
        return False  # written from the start: they come with metrics
    if path.is_dir():
        return any(path.iterdir())
    return path.stat().st_size > 0


def record_start(folder: Path, step: int, record: dict) -> Path:
    """Add this start of the run (its first step and ``record``, :func:`trainers.provenance.config_provenance`)
    to ``starts.jsonl``; earlier starts are kept, so a resumed run lists the code of each part."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    line = {"step": step, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "provenance": record}
    with open(folder / START_FILE, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")
    return folder / START_FILE


def trim_jsonl(path: Path, keep) -> None:
    """Rewrite a JSON Lines file keeping the rows for which ``keep(row)`` is true (atomically)."""
    if not path.is_file():
        return
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [line for line in rows if keep(json.loads(line))]
    partial = path.with_name(path.name + ".partial")
    partial.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    partial.replace(path)


def _fresh(parent: Path, name: str) -> Path:
    folder, suffix = parent / name, 1
    while folder.exists():
        suffix += 1
        folder = parent / f"{name}-{suffix}"
    return folder
