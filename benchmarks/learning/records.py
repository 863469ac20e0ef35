"""Reading one finished run folder into plain records.

The trainer writes, per run folder: ``metrics.jsonl`` (one row per training step) and
``samples.jsonl`` (a few sampled replies per training step). The bench's evaluation
(:mod:`benchmarks.learning.evaluation`) writes ``bench_eval/step_{step:05d}.jsonl``, one JSON object
per held-out problem (``task_id``, ``reward``, ``solved``, ``tests_passed``, ``uses_helper``,
``helper_needed`` (solved with main needing the helper; newer benches only), ``main_calls_helper``, ``components``, ``replies``); step 0 is the untrained team's evaluation,
shared by every run of the team. Runs of an older bench have the trainer's own
``eval/step_{step:05d}.jsonl`` (no replies, no components) and ``eval.json``: they are read as well.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from trainers.metrics_log import read_jsonl

STEP_FILE = re.compile(r"step_(\d+)\.jsonl$")
TRAIN_LOG_KEY = re.compile(r"^(step$|train/|reward/|perf/step_s$|agent/[^/]+/(grad_norm|grad_clipped|clip_fraction)$)")
"""What the records keep of each training step (``metrics.jsonl``): the learning signal, not the timings."""
# Table metric -> the per-problem field it averages (booleans count as 0/1).
METRICS = {"pass_rate": "solved", "acc": "tests_passed", "reward": "reward", "coop_rate": "uses_helper",
           "helper_dependent_rate": "helper_needed", "helper_call_rate": "main_calls_helper"}


@dataclasses.dataclass
class Run:
    """One (algorithm, seed) run as the report sees it."""

    name: str
    algo: str
    seed: int
    status: str = "missing"
    """``done``, ``failed`` (with ``error``) or ``missing`` (not run yet)."""
    error: str = ""
    wall_s: float | None = None
    evals: dict[int, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    """Held-out evaluation step -> one record per problem."""
    train_rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    samples: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """The first logged sample of the first and of the last training step, so a reader sees what the
    reward made the policy write."""
    measured: dict[str, float] | None = None
    """What the run spent, when read back from exported records (else computed from ``train_rows``)."""
    team: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "done"


def read_run(run: Run, run_dir: Path, untrained: list[dict[str, Any]] | None = None,
             eval_set: str | None = None) -> Run:
    """Fill ``run`` from ``run_dir`` (``untrained``: the team's step-0 records, for a run the bench
    evaluated; ``eval_set``: an extra held-out set's records instead of the main set's); a finished
    folder without per-problem evaluations is a failure."""
    from benchmarks.learning.evaluation import DONE_FILE, records_folder

    folder = run_dir / records_folder(eval_set)
    if (folder / DONE_FILE).is_file():
        run.evals = read_evals(folder)
        if untrained:
            run.evals[0] = untrained
        run.evals = dict(sorted(run.evals.items()))
    elif (run_dir / "eval.json").is_file():
        run.evals = read_evals(run_dir / "eval")
    else:
        return run
    run.train_rows = [row for row in read_jsonl(run_dir / "metrics.jsonl") if "reward/mean" in row]
    run.samples = first_and_last_samples(run_dir / "samples.jsonl")
    if len(run.evals) < 2:
        run.status, run.error = "failed", f"fewer than two held-out evaluations (untrained and trained) for {run_dir.name}"
    else:
        run.status = "done"
    return run


def read_evals(folder: Path) -> dict[int, list[dict[str, Any]]]:
    evals = {}
    for path in sorted(folder.glob("step_*.jsonl")) if folder.is_dir() else ():
        match = STEP_FILE.search(path.name)
        if match:
            evals[int(match.group(1))] = read_jsonl(path)
    return evals




def first_and_last_samples(path: Path) -> list[dict[str, Any]]:
    """The first record of the first and of the last step in ``samples.jsonl`` (none if absent)."""
    records = read_jsonl(path) if path.is_file() else []
    if not records:
        return []
    first_step, last_step = records[0]["step"], records[-1]["step"]
    first = next(r for r in records if r["step"] == first_step)
    last = next(r for r in records if r["step"] == last_step)
    keep = ("step", "replies", "reward", "components")
    return [{key: record.get(key) for key in keep} for record in ((first,) if first is last else (first, last))]


def problem_values(records: list[dict[str, Any]], metric: str, task_ids: list[str]) -> list[float] | None:
    """The metric per problem in ``task_ids`` order; ``None`` when any problem lacks it."""
    by_task = {record["task_id"]: record.get(METRICS[metric]) for record in records}
    values = [by_task.get(task_id) for task_id in task_ids]
    if any(value is None for value in values):
        return None
    return [float(value) for value in values]


def measured_budget(run: Run) -> dict[str, float]:
    """What a run actually spent: generated tokens of all agents and env steps (each runs the
    program in the sandbox at most once), summed over the training steps; held-out episodes apart."""
    if run.measured is not None:
        return dict(run.measured)
    rows = run.train_rows
    return {
        "steps": len(rows),
        "generated_tokens": int(sum(row.get("perf/generated_tokens", 0) for row in rows)),
        "env_steps": int(sum(row.get("train/joint_samples", 0) for row in rows)),
        "eval_episodes": sum(len(records) for records in run.evals.values()),
        "train_s": float(sum(row.get("perf/step_s", 0.0) for row in rows)),
    }


def train_log(run: Run) -> list[dict[str, Any]]:
    """Each training step's signal (the groups whose tests vary, the reward, the gradient norm and
    the share of clipped updates per agent), as the exported records keep it."""
    return [{key: value for key, value in row.items() if TRAIN_LOG_KEY.match(key)} for row in run.train_rows]


def training_signal(run: Run) -> dict[str, float] | None:
    """Over all training steps of a run: the groups, the share whose tests component varied (the
    correctness signal), the mean gradient norm and the share of optimizer steps clipped (over agents)."""
    rows = run.train_rows
    if not rows:
        return None
    groups = sum(row.get("train/groups", 0) for row in rows)
    varied = sum(row.get("train/groups_tests_vary", 0) for row in rows)
    norms = [v for row in rows for k, v in row.items() if k.endswith("/grad_norm") and isinstance(v, (int, float))]
    clipped = [v for row in rows for k, v in row.items() if k.endswith("/grad_clipped") and isinstance(v, (int, float))]
    return {
        "steps": len(rows), "groups": groups, "groups_tests_vary": varied,
        "tests_vary_share": varied / groups if groups else float("nan"),
        "grad_norm_mean": sum(norms) / len(norms) if norms else float("nan"),
        "clipped_share": sum(clipped) / len(clipped) if clipped else float("nan"),
    }


def training_curve(run: Run) -> list[dict[str, float]]:
    """Per training step: the mean training reward and the share of groups whose tests varied."""
    curve = []
    for index, row in enumerate(run.train_rows, start=1):
        groups = row.get("train/groups") or 0
        curve.append({"step": row.get("train/step", index), "reward": row.get("reward/mean"),
                      "tests_vary_share": row.get("train/groups_tests_vary", 0) / groups if groups else None})
    return curve
