"""CPU learning run: MAGRPO (helper + main) vs single-agent GRPO (main alone) with the same budget.

    python -m benchmarks.learning_run --steps 12 --problems-per-step 2
    python -m benchmarks.learning_run --steps 1 --eval-problems 2 --max-new-tokens 16 --out /tmp/lr  # smoke test
    python -m benchmarks.learning_run --report-only     # rebuild the report from finished runs

Both runs start from the ``cpu-demo`` preset (SmolLM2-135M-Instruct, one LoRA adapter per agent) on
the train split of ``coop_humaneval-v0``; GRPO uses the same env with ``team="single"``. Same steps,
problems per step, group size, generation length, learning rate, LoRA rank and seed for both. Each
run is ``llm-coop train`` in its own process (one at a time), which evaluates greedily on the held-out
split before (untrained) and after training; the before/after pass rates, reward curves, wall times
and generated tokens go to ``<out>/README.md`` with two PNG plots.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("benchmarks/results/cpu_learning")
DEFAULT_RUNS = Path("runs/cpu_learning")
ALGORITHMS = ("magrpo", "grpo")
# The single-agent run trains `main` alone on the same env with the whole solution in one reply.
ALGORITHM_OVERRIDES = {"magrpo": ["env_kwargs.team=pair"], "grpo": ["env_kwargs.team=single"]}
ALGORITHM_LABELS = {"magrpo": "MAGRPO (helper + main)", "grpo": "GRPO (main alone)"}
REWARD_MAX = {"magrpo": 4.0, "grpo": 2.1}


@dataclasses.dataclass(frozen=True)
class Budget:
    """The compute budget both algorithms get."""

    steps: int
    problems_per_step: int
    group_size: int
    max_new_tokens: int
    learning_rate: float
    lora_r: int
    eval_problems: int
    seed: int

    def __post_init__(self) -> None:
        for name in ("steps", "problems_per_step", "group_size", "max_new_tokens", "lora_r", "eval_problems"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ValueError(f"--learning-rate must be positive, got {self.learning_rate}")

    def overrides(self) -> list[str]:
        return [
            f"problems_per_step={self.problems_per_step}", f"group_size={self.group_size}",
            f"sampling.max_new_tokens={self.max_new_tokens}", f"learning_rate={self.learning_rate}",
            f"lora_r={self.lora_r}", f"seed={self.seed}", "save_every=0",
        ]


# ---------------------------------------------------------------- training (one subprocess per run)


def train_command(algo: str, budget: Budget, runs_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "trainers", "train", "--preset", "cpu-demo", "--algo", algo,
        "--run-name", algo, "--run-dir", str(runs_dir), "--steps", str(budget.steps),
        "--eval-problems", str(budget.eval_problems), *budget.overrides(), *ALGORITHM_OVERRIDES[algo],
    ]


def run_training(algo: str, budget: Budget, runs_dir: Path) -> float:
    """Train one algorithm from scratch (its old run folder is removed: metrics.jsonl appends); wall seconds."""
    run_dir = runs_dir / algo
    if run_dir.exists():
        shutil.rmtree(run_dir)
    command = train_command(algo, budget, runs_dir)
    print(f"\n=== {ALGORITHM_LABELS[algo]}: {shlex.join(command)}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True)  # the trainer draws its own progress bar
    wall_s = time.perf_counter() - started
    (run_dir / "wall_s.json").write_text(json.dumps({"wall_s": wall_s}), encoding="utf-8")
    return wall_s


# ---------------------------------------------------------------- reading a finished run


def read_run(run_dir: Path) -> dict[str, Any]:
    from benchmarks.reporting.plots import read_metrics_jsonl

    metrics = read_metrics_jsonl(run_dir / "metrics.jsonl")
    evaluation = json.loads((run_dir / "eval.json").read_text(encoding="utf-8"))
    wall = json.loads((run_dir / "wall_s.json").read_text(encoding="utf-8"))["wall_s"]
    return {"metrics": metrics, "eval": evaluation, "wall_s": wall}


def summarise(run: Mapping[str, Any]) -> dict[str, Any]:
    metrics = run["metrics"]

    def total(key: str) -> float:
        return sum(row.get(key, 0.0) for row in metrics)

    def mean_of(key: str, rows: Sequence[Mapping[str, Any]]) -> float | None:
        values = [row[key] for row in rows if key in row]
        return sum(values) / len(values) if values else None

    third = max(1, len(metrics) // 3)
    before, after = run["eval"]["before"], run["eval"]["after"]
    return {
        "steps": len(metrics),
        "wall_s": run["wall_s"],
        "train_s": total("perf/step_s"),
        "rollout_s": total("perf/rollout_s"),
        "update_s": total("perf/update_s"),
        "generated_tokens": int(total("perf/generated_tokens")),
        "reward_first_third": mean_of("reward/mean", metrics[:third]),
        "reward_last_third": mean_of("reward/mean", metrics[-third:]),
        "tests_first_third": mean_of("reward/tests", metrics[:third]),
        "tests_last_third": mean_of("reward/tests", metrics[-third:]),
        "flat_groups": total("train/flat_groups"),
        "groups": total("train/groups"),
        "before": before,
        "after": after,
    }


# ---------------------------------------------------------------- plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _series(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[list[float], list[float]]:
    points = [(row["step"], row[key]) for row in rows if key in row and "step" in row]
    return [p[0] for p in points], [p[1] for p in points]


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    return [sum(values[max(0, i - window + 1) : i + 1]) / (i + 1 - max(0, i - window + 1)) for i in range(len(values))]


def plot_curves(runs: Mapping[str, Mapping[str, Any]], path: Path, smooth: int = 3) -> Path:
    """Each algorithm's own reward (different scales: max 4.0 vs 2.1), then the shared tests component."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    panels = [(axes[0], "magrpo", "reward/mean"), (axes[1], "grpo", "reward/mean")]
    for axis, algo, key in panels:
        if algo in runs:
            _plot_line(axis, runs[algo]["metrics"], key, f"C{ALGORITHMS.index(algo)}", smooth)
        axis.set_title(f"{ALGORITHM_LABELS[algo]}: {key} (max {REWARD_MAX[algo]})", fontsize=9)
    for algo, run in runs.items():
        _plot_line(axes[2], run["metrics"], "reward/tests", f"C{ALGORITHMS.index(algo)}", smooth, ALGORITHM_LABELS[algo])
    axes[2].set_title("reward/tests (fraction of tests passed, both)", fontsize=9)
    axes[2].legend(fontsize=8)
    for axis in axes:
        axis.set_xlabel("step")
        axis.grid(alpha=0.3)
    return _save(figure, plt, path)


def _plot_line(axis, rows, key: str, color: str, smooth: int, label: str | None = None) -> None:
    steps, values = _series(rows, key)
    axis.plot(steps, values, color=color, alpha=0.3, marker=".", linewidth=0.8)
    axis.plot(steps, _moving_average(values, smooth), color=color, label=label and f"{label} (avg of {smooth})")


def plot_pass_rates(summaries: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 3.4))
    labels = list(summaries)
    for offset, phase in ((-0.2, "before"), (0.2, "after")):
        values = [100 * summaries[a][phase]["pass_rate"] for a in labels]
        bars = axis.bar([i + offset for i in range(len(labels))], values, 0.4, label=f"{phase} training")
        axis.bar_label(bars, fmt="%.1f", fontsize=8, padding=1)
    problems = max(s["after"]["problems"] for s in summaries.values())
    axis.set_xticks(range(len(labels)), [ALGORITHM_LABELS[a] for a in labels], fontsize=8)
    axis.set_ylabel(f"greedy pass rate on {problems} held-out problems (%)", fontsize=8)
    axis.set_ylim(0, max(10.0, 1.3 * max(100 * s[p]["pass_rate"] for s in summaries.values() for p in ("before", "after"))))
    axis.legend(fontsize=8)
    return _save(figure, plt, path)


def _save(figure, plt, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


# ---------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    model = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    return {"nproc": os.cpu_count(), "cpu": model, "load_avg": os.getloadavg(), "python": platform.python_version()}


def results_table(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [
        "| run | held-out pass rate before | after | mean reward before | after | train reward, first third → last third of steps | reward/tests, first → last third | generated tokens | training s (steps only) | wall s (incl. load + 2 evals) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for algo, s in summaries.items():
        b, a = s["before"], s["after"]
        lines.append(
            f"| {ALGORITHM_LABELS[algo]} | {_solved(b)} | {_solved(a)} | {b['reward']:.3f} / {REWARD_MAX[algo]} | "
            f"{a['reward']:.3f} / {REWARD_MAX[algo]} | {s['reward_first_third']:.3f} → {s['reward_last_third']:.3f} | "
            f"{s['tests_first_third']:.3f} → {s['tests_last_third']:.3f} | {s['generated_tokens']:,} | "
            f"{s['train_s']:.0f} | {s['wall_s']:.0f} |"
        )
    return "\n".join(lines)


def _solved(result: Mapping[str, Any]) -> str:
    solved = round(result["pass_rate"] * result["problems"])
    return f"{solved}/{result['problems']} ({100 * result['pass_rate']:.1f} %)"


def write_report(out: Path, budget: Budget, summaries: Mapping[str, Mapping[str, Any]], command: str,
                 machine_info: Mapping[str, Any], reading: str, runs_dir: Path = DEFAULT_RUNS) -> Path:
    settings = "\n".join(f"| {k} | {v} |" for k, v in dataclasses.asdict(budget).items())
    commands = "\n".join(shlex.join(train_command(a, budget, runs_dir)) for a in summaries)
    text = f"""# CPU learning run: MAGRPO vs single-agent GRPO

Written by `{command}` (run in the background with `nice -n 10`).

Machine: {machine_info['nproc']} cores ({machine_info['cpu']}), shared with other jobs;
load average at the start {_load(machine_info['load_start'])}, at the end {_load(machine_info['load_end'])}.
Python {machine_info['python']}. Model SmolLM2-135M-Instruct (fp32, one LoRA adapter per trained agent).

## Settings (the same for both algorithms)

| setting | value |
|---|---|
{settings}
| env | `coop_humaneval-v0`, train split (50 problems); held-out: test split (16 problems) |
| MAGRPO | `team="pair"`: helper + main, joint reward `levels` (max 4.0) |
| GRPO | `team="single"`: main writes the whole solution, reward `levels` (max 2.1) |
| sampling | temperature 0.8 (the `cpu-demo` preset); evaluation is greedy |

The trainer runs, one after the other:

```bash
{commands}
```

## Results

{results_table(summaries)}

"Pass rate" is the share of held-out problems whose greedy (temperature 0) episode passes every test,
i.e. greedy pass@1, measured by the trainer before (untrained base model in that team setting) and
after training. "Generated tokens" and "training s" are sums of `perf/generated_tokens` and
`perf/step_s` over the steps in `metrics.jsonl`. MAGRPO samples one reply per agent per joint sample,
so with the same G and `max_new_tokens` it generates (and back-propagates through) up to twice the
tokens of GRPO per step: the budgets are equal in steps, samples and per-reply length, not in FLOPs.

![learning curves](curves.png)

Raw points (faint) and a moving average over 3 steps. Each algorithm's `reward/mean` is on its own
scale; `reward/tests` (fraction of the problem's tests passed) is shared by both.

![pass rate before and after](pass_rate.png)

## Reading

{reading}

Files: `summary.json` (all numbers above), `<algo>_metrics.jsonl` and `<algo>_eval.json` (copied from
the run folders `{runs_dir}/<algo>/`).
"""
    path = out / "README.md"
    path.write_text(text, encoding="utf-8")
    return path


def _load(load: Sequence[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in load) + " (1, 5, 15 min)"


def default_reading(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """A factual paragraph from the numbers; the write-up may replace it with ``--reading FILE``."""
    parts = []
    for algo, s in summaries.items():
        change = s["after"]["pass_rate"] - s["before"]["pass_rate"]
        parts.append(
            f"{ALGORITHM_LABELS[algo]}: held-out greedy pass rate {_solved(s['before'])} → {_solved(s['after'])} "
            f"({'+' if change >= 0 else ''}{100 * change:.1f} points); training reward/mean "
            f"{s['reward_first_third']:.3f} → {s['reward_last_third']:.3f} (first vs last third of steps)."
        )
    return "\n\n".join(parts)


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--problems-per-step", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--lora-r", type=int, default=8)
    parser.add_argument("--eval-problems", type=int, default=16, help="held-out problems (the test split has 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algos", default="magrpo,grpo", help="comma-separated subset of magrpo,grpo")
    parser.add_argument("--runs-dir", type=Path, default=DEFAULT_RUNS, help="where the trainer writes its run folders")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder (README.md, PNGs, JSON)")
    parser.add_argument("--report-only", action="store_true", help="do not train; report the finished runs")
    parser.add_argument("--reading", type=Path, default=None, help="Markdown file with the written reading")
    parser.add_argument("--docs-images", type=Path, default=None,
                        help="also copy the PNGs here as cpu_learning_<name>.png (mkdocs serves only docs/)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    argv = list(argv if argv is not None else sys.argv[1:])
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    unknown = sorted(set(algos) - set(ALGORITHMS))
    if unknown:
        raise SystemExit(f"--algos: unknown {unknown}; choose from {list(ALGORITHMS)}")
    os.environ.setdefault("LLM_COOP_DATA_DIR", "/work/shared/data")
    machine_file = args.runs_dir / "machine.json"
    if not args.report_only:
        budget = Budget(args.steps, args.problems_per_step, args.group_size, args.max_new_tokens,
                        args.learning_rate, args.lora_r, args.eval_problems, args.seed)
        info = {**machine(), "load_start": os.getloadavg(), "budget": dataclasses.asdict(budget),
                "command": "python -m benchmarks.learning_run " + shlex.join(argv)}
        for algo in algos:
            run_training(algo, budget, args.runs_dir)
        info["load_end"] = os.getloadavg()
        args.runs_dir.mkdir(parents=True, exist_ok=True)
        machine_file.write_text(json.dumps(info), encoding="utf-8")
    # --report-only reports the budget and command the runs were trained with, not this call's flags.
    info = json.loads(machine_file.read_text(encoding="utf-8"))
    budget = Budget(**info["budget"])
    runs = {algo: read_run(args.runs_dir / algo) for algo in algos}
    summaries = {algo: summarise(run) for algo, run in runs.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    for algo in algos:
        shutil.copy(args.runs_dir / algo / "metrics.jsonl", args.out / f"{algo}_metrics.jsonl")
        shutil.copy(args.runs_dir / algo / "eval.json", args.out / f"{algo}_eval.json")
    plot_curves(runs, args.out / "curves.png")
    plot_pass_rates(summaries, args.out / "pass_rate.png")
    if args.docs_images is not None:
        args.docs_images.mkdir(parents=True, exist_ok=True)
        for name in ("curves", "pass_rate"):
            shutil.copy(args.out / f"{name}.png", args.docs_images / f"cpu_learning_{name}.png")
    record = {"budget": dataclasses.asdict(budget), "machine": info, "runs": summaries}
    (args.out / "summary.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    reading = args.reading.read_text(encoding="utf-8") if args.reading else default_reading(summaries)
    report = write_report(args.out, budget, summaries, info["command"], info, reading, args.runs_dir)
    print(f"\n{results_table(summaries)}\n\nReport: {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
