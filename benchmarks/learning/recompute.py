"""The results table from the committed per-problem records, with one command:

    python -m benchmarks.learning.recompute benchmarks/results/learning/<env>

Every ``llm-coop bench`` writes, beside ``results.md``/``results.json``, the folder ``records/``:

* ``bench.json``: the benchmark's settings (env, algorithms, seeds, budget, model, machine, sessions);
* ``runs.json``: one entry per planned run (status, error, wall time, measured budget, first and last
  training sample, each training step's signal (``train_log``: groups whose tests vary, reward,
  gradient norm, share of clipped updates), and which record file holds each evaluated step);
* ``untrained-<team>.jsonl``: the untrained team's evaluation, step 0 of every run of that team;
* ``<run>/step_NNNNN.jsonl``: the run's evaluations after training.

A record is one held-out problem (``task_id``, ``reward``, ``solved``, ``tests_passed``,
``uses_helper``, ``main_calls_helper``, ``components``, ``replies``). The bench itself builds its
report through :func:`recompute`, so the committed table is by construction what this command prints.
Paths in these files are relative to the project root.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.learning.records import Run, measured_budget, train_log
from trainers.metrics_log import read_jsonl

RECORDS = "records"


def export_records(out: Path, meta: Mapping[str, Any], runs: Sequence[Run], teams: Mapping[str, str]) -> Path:
    """Write ``out/records/`` from the runs read off the runs folder (replacing what was there)."""
    folder = out / RECORDS
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shared: dict[str, list[dict[str, Any]]] = {}
    entries = []
    for run in runs:
        files = {}
        team = teams.get(run.algo, "pair")
        for step, records in sorted(run.evals.items()):
            if step == 0 and shared.setdefault(team, records) == records:
                files[str(step)] = f"untrained-{team}.jsonl"  # the one untrained evaluation of the team
                continue
            files[str(step)] = f"{run.name}/step_{step:05d}.jsonl"
            _write_jsonl(folder / files[str(step)], records)
        entries.append({
            "name": run.name, "algo": run.algo, "seed": run.seed, "team": teams.get(run.algo), "status": run.status,
            "error": run.error, "wall_s": run.wall_s, "samples": run.samples,
            "measured": measured_budget(run) if run.ok else None, "train_log": train_log(run), "evals": files,
        })
    for team, records in shared.items():
        _write_jsonl(folder / f"untrained-{team}.jsonl", records)
    _write_json(folder / "runs.json", relative(entries))
    _write_json(folder / "bench.json", relative(dict(meta)))
    return folder


def load(out: Path) -> tuple[dict[str, Any], list[Run]]:
    """The benchmark's settings and its runs, read back from ``out/records/``."""
    folder = out / RECORDS
    if not (folder / "runs.json").is_file():
        raise FileNotFoundError(f"{folder} holds no per-problem records (runs.json is missing): "
                                "this table was written before records were kept, so it cannot be recomputed")
    meta = json.loads((folder / "bench.json").read_text(encoding="utf-8"))
    runs = []
    for entry in json.loads((folder / "runs.json").read_text(encoding="utf-8")):
        run = Run(entry["name"], entry["algo"], entry["seed"], status=entry["status"], error=entry.get("error", ""),
                  wall_s=entry.get("wall_s"), samples=entry.get("samples") or [], measured=entry.get("measured"),
                  team=entry.get("team"), train_rows=entry.get("train_log") or [])
        run.evals = {int(step): read_jsonl(folder / name) for step, name in entry["evals"].items()}
        runs.append(run)
    return meta, runs


def recompute(out: Path, resamples: int | None = None) -> tuple[dict[str, Any], dict[str, Path]]:
    """Aggregate the records of ``out`` and (re)write ``results.md``, ``results.json``, ``curves.png``."""
    from benchmarks.learning import bootstrap
    from benchmarks.learning.aggregate import aggregate
    from benchmarks.learning.report import write_report

    meta, runs = load(out)
    summary = aggregate(runs, meta["algorithms"], resamples or meta.get("resamples") or bootstrap.RESAMPLES)
    return summary, write_report(out, meta, summary)


def relative(value: Any) -> Any:
    """``value`` with the project root (the working directory) and this interpreter's path taken out
    of every string, so that results files name no machine's paths."""
    root = str(Path.cwd().resolve()) + "/"
    if isinstance(value, str):
        return value.replace(sys.executable, "python").replace(root, "")
    if isinstance(value, Mapping):
        return {key: relative(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [relative(item) for item in value]
    return value


def _write_jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(relative(r)) + "\n" for r in records), encoding="utf-8")


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning.recompute", description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a results folder of llm-coop bench (with records/)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default: the table's own)")
    args = parser.parse_args(list(argv))
    try:
        summary, paths = recompute(args.folder, args.resamples)
    except FileNotFoundError as error:
        print(f"recompute: {error}", file=sys.stderr)
        return 2
    from benchmarks.learning.plan import Budget, teams_of
    from benchmarks.learning.report import results_table

    meta = json.loads((args.folder / RECORDS / "bench.json").read_text(encoding="utf-8"))
    print(results_table(summary, Budget.from_dict(meta["budget"]), teams_of(meta)))
    print("Wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
