"""``results.md``, ``results.json`` and ``curves.png`` from the aggregate and the bench's metadata."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.learning.equivalents import shown_summary
from benchmarks.learning.plan import Budget, teams_of
from benchmarks.learning.twins import twin_lines

LABELS = {"magrpo": "MAGRPO (two agents)", "grpo": "GRPO (single agent)"}
UNTRAINED = {"pair": "untrained pair", "single": "untrained single agent"}
TEAM_WORDS = {"pair": "a pair", "single": "a single agent"}
COLUMNS = (("pass_rate", "held-out pass rate"), ("acc", "acc (tests passed)"), ("reward", "mean reward"),
           ("coop_rate", "coop rate"), ("helper_dependent_rate", "solved needing helper"),
           ("helper_call_rate", "main calls helper"))


def label(algo: str) -> str:
    """The algorithm's name in tables and plots: its class's spelling of a registered name (``marloo``
    reads ``MARLOO``), ``Class (pkg.module)`` for ``pkg.module:Class``."""
    if ":" in algo:
        module, _, name = algo.partition(":")
        return f"{name} ({module})"
    if algo in LABELS:
        return LABELS[algo]
    try:
        from trainers.algorithms.registry import algorithm_factory

        spelled = getattr(algorithm_factory(algo), "__name__", "")
    except Exception:  # noqa: BLE001 - a report of old runs must not need their algorithm importable
        spelled = ""
    return spelled if spelled.lower() == algo.lower() else algo


def write_report(out: Path, meta: Mapping[str, Any], summary: Mapping[str, Any]) -> dict[str, Path]:
    from benchmarks.learning.recompute import relative

    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "md": out / "results.md"}
    # Paths relative to the project root: a results file names no machine's folders.
    paths["json"].write_text(json.dumps(relative({**meta, **summary}), indent=2), encoding="utf-8")
    curves = plot_curves(summary, out / "curves.png")
    training = plot_training(summary, out / "training.png")
    paths["md"].write_text(relative(markdown(meta, summary, has_curves=curves is not None, has_training=training is not None)),
                           encoding="utf-8")
    if curves is not None:
        paths["png"] = curves
    if training is not None:
        paths["training_png"] = training
    return paths


# ---------------------------------------------------------------- the markdown page


def markdown(meta: Mapping[str, Any], summary: Mapping[str, Any], has_curves: bool, has_training: bool = False) -> str:
    budget = Budget.from_dict(meta["budget"])
    teams = teams_of(meta)
    machine = meta["machine"]
    rows, merged_note = shown_summary(meta, summary)  # MARLOO at a fixed G is MAGRPO: one row
    protocol = meta.get("protocol") or {}
    parts = [
        f"# Learning benchmark on `{meta['env']}`" + (f": extra held-out set `{meta['eval_set']}`" if meta.get("eval_set") else ""),
        *([f"**{protocol['label']}.**"] if protocol.get("comparable") is False and protocol.get("label") else []),
        *([f"Held-out env kwargs of this set: `{json.dumps(meta['eval_sets'][meta['eval_set']])}`; the main set's "
           "report is in the folder above."] if meta.get("eval_set") else []),
        f"Reproduce (every run, all settings spelled out; llm-coop-envs {meta['package_version']}):",
        f"```bash\n{reproduce_command(meta)}\n```",
        f"Model: {meta['model']}. Training samples at temperature {budget.temperature}, top-p {budget.top_p}"
        + (", each reply ending at the closing fence of its code block" if budget.stop_after_code else "")
        + "; every held-out evaluation is greedy (temperature 0), one episode per problem. The untrained "
        "team is evaluated once per setting and is step 0 of every run of that team. Every number below "
        "is recomputed from the per-problem records in `records/` by "
        "`python -m benchmarks.learning.recompute <this folder>`.",
        f"Machine: {machine['cores']} cores ({machine['cpu']}), Python {machine['python']}. "
        "Runs execute one at a time; the load around each session that trained:",
        sessions_table(meta.get("sessions", [])),
        f"## Held-out results on {len(summary['task_ids'])} problems (mean [95 % CI])",
        results_table(rows, budget, teams),
        *([merged_note] if merged_note else []),
        "## Changes (mean [95 % CI]; rates in percentage points)",
        changes_table(rows, teams),
        churn_lines(rows),
        "Held-out problems whose template the runs trained on (the same draws for every algorithm of a seed):\n\n"
        + "\n".join(twin_lines(meta, len(summary["task_ids"]))),
        *family_section(rows),
        "## Reward change by component (after − untrained, paired; mean [95 % CI])",
        components_table(rows),
        "## Budget per algorithm",
        budget_table(meta, summary, budget, teams),
        "## Runs",
        runs_table(summary),
        "## Training signal",
        signal_table(summary),
        *(["![training reward and groups whose tests vary, per step](training.png)"] if has_training else []),
    ]
    if any(run.get("samples") for run in summary["runs"]):
        parts += ["## What the policy wrote (first and last training step)", samples_section(summary)]
    if has_curves:
        parts += ["## Learning curves", "![held-out metrics per evaluation step](curves.png)",
                  "Mean over seeds; the band is the 95 % hierarchical-bootstrap interval (seeds, then problems)."]
    parts += ["## What this does not show", limits(meta, summary, budget)]
    return "\n\n".join(parts) + "\n"


def reproduce_command(meta: Mapping[str, Any]) -> str:
    """The one command that runs this whole benchmark, whatever sessions it was run in."""
    budget = meta["budget"]
    flags = [meta["env"], "--algos", ",".join(meta["algorithms"]), "--seeds", *map(str, meta["seeds"])]
    for name, value in budget.items():
        flag = name.replace("_", "-")
        if isinstance(value, bool):  # an on/off switch takes no value
            flags.append(f"--{flag}" if value else f"--no-{flag}")
        else:
            flags += [f"--{flag}", str(value)]
    for override in meta.get("overrides", []):
        flags += ["--set", override]
    for name, kwargs in (meta.get("eval_sets") or {}).items():
        flags += ["--eval-set", f"{name}={json.dumps(kwargs)}"]
    return "llm-coop bench " + shlex.join(flags)


def columns(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The table's metrics that some algorithm has. Without a test count (a writing env) "solved"
    means every reward level met in full, and is named so."""
    known = {metric for result in summary["algorithms"].values() for metric, value in result["metrics"].items() if value}
    shown = [(metric, title) for metric, title in COLUMNS if metric in known]
    if "acc" not in known:
        shown = [(m, "held-out solved rate (every level met)" if m == "pass_rate" else t) for m, t in shown]
    return shown


def results_table(summary: Mapping[str, Any], budget: Budget, teams: Mapping[str, str]) -> str:
    shown = columns(summary)
    lines = ["| agents | seeds | " + " | ".join(title for _, title in shown) + " |",
             "|---|---:|" + "---:|" * len(shown)]
    shown_teams = set()
    for algo, result in summary["algorithms"].items():
        seeds = len(result["seeds"])
        if teams[algo] not in shown_teams:  # step 0 is the same untrained model for every algorithm of a team
            shown_teams.add(teams[algo])
            lines.append(_row(f"{UNTRAINED[teams[algo]]} (step 0 of the {algo} runs)", seeds, result, "before", shown))
        lines.append(_row(f"{label(algo)} after {budget.steps} steps", seeds, result, "after", shown))
    return "\n".join(lines)


def changes_table(summary: Mapping[str, Any], teams: Mapping[str, str]) -> str:
    shown = columns(summary)
    lines = ["| comparison | " + " | ".join(title for _, title in shown) + " |", "|---|" + "---:|" * len(shown)]
    for algo, result in summary["algorithms"].items():
        cells = [_cell(metric, (result["metrics"].get(metric) or {}).get("change"), signed=True) for metric, _ in shown]
        lines.append(f"| {label(algo)}: after − {UNTRAINED[teams[algo]]} (paired) | " + " | ".join(cells) + " |")
    notes: dict[str, str] = {}  # why a cell is not comparable -> its mark, (a), (b), ...
    for name, result in summary["comparisons"].items():
        a, b = name.split(" - ")
        cells = []
        for metric, title in shown:
            if metric in result:
                cells.append(_cell(metric, result.get(metric), signed=True))
                continue
            reason = (f"{title}: {label(a)} is {TEAM_WORDS.get(teams.get(a), 'a team')}, {label(b)} "
                      f"{TEAM_WORDS.get(teams.get(b), 'a team')}; {why_not_comparable(metric, teams.get(a), teams.get(b))}")
            cells.append(f"not comparable ({notes.setdefault(reason, chr(ord('a') + len(notes)))})")
        lines.append(f"| {label(a)} − {label(b)}, after | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    return table + "".join(f"\n\n({mark}) {reason}." for reason, mark in notes.items()) if notes else table


def family_section(summary: Mapping[str, Any]) -> list[str]:
    """Per family, untrained -> trained: pass rate, the helper-dependent solve rate (solved with main
    needing the helper) and the syntactic call rate; empty when the records name no families."""
    rows = []
    for algo, result in summary["algorithms"].items():
        for family, steps in (result.get("families") or {}).items():
            cells = [f"{100 * steps['before'][m]:.1f} → {100 * steps['after'][m]:.1f}"
                     for m in ("pass_rate", "helper_dependent_rate", "helper_call_rate")]
            rows.append(f"| {label(algo)} | {family} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    return ["## Per family (untrained → trained, %, mean over seeds)",
            "| agents | family | pass rate | solved needing helper | main calls helper |\n|---|---|---:|---:|---:|\n"
            + "\n".join(rows)]


def churn_lines(summary: Mapping[str, Any]) -> str:
    """How many problems each algorithm's training moved (gained and lost), beside the net change."""
    lines = []
    for algo, result in summary["algorithms"].items():
        moved = result.get("churn")
        if moved:
            lines.append(f"* {label(algo)}: {100 * moved['changed']:.1f} % of the problems changed outcome "
                         f"(solved after but not before: {100 * moved['gained']:.1f} %; before but not after: "
                         f"{100 * moved['lost']:.1f} %), mean over seeds.")
    return "Churn, trained against untrained, per problem:\n\n" + "\n".join(lines) if lines else ""


ACROSS_TEAMS = {
    "reward": "a pair's reward and a single agent's are on different scales (the pair's also pays for "
              "writing and calling a helper), so only the rates compare across teams",
    "coop_rate": "only a pair has a helper to cooperate with",
    "helper_dependent_rate": "only a pair has a helper to need",
    "helper_call_rate": "only a pair has a helper to call",
}
"""Why a metric does not compare between a pair and a single agent."""


def why_not_comparable(metric: str, team_a: str | None, team_b: str | None) -> str:
    """Why a metric of two algorithms is not compared: their teams differ, or (two algorithms of the
    same team) the records do not say which team each run fielded, as records of an older bench."""
    if team_a != team_b:
        return ACROSS_TEAMS.get(metric, "the teams differ")
    return "the per-problem records do not name each run's team (an older bench wrote them); run the bench again to compare"


def components_table(summary: Mapping[str, Any]) -> str:
    """Each algorithm's reward change split by reward component: a gain in formatting components
    (helper_defined, main_defined, syntax) is not a gain in tests passed."""
    rows = {algo: result.get("components") or {} for algo, result in summary["algorithms"].items()}
    names = sorted({name for components in rows.values() for name in components})
    if not names:
        return "The records carry no reward components (a run of an older bench): no split."
    lines = ["| algorithm | " + " | ".join(f"`{n}`" for n in names) + " |", "|---|" + "---:|" * len(names)]
    for algo, components in rows.items():
        cells = [_cell("reward", components.get(name), signed=True) for name in names]
        lines.append(f"| {label(algo)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + (
        "\n\nThe components add up to the reward change; each is on the reward's own scale. "
        "\"main calls helper\" above counts episodes whose main code calls the helper's function, "
        "whether or not the reward paid for it (it pays only once a test passes).")


def budget_table(meta: Mapping[str, Any], summary: Mapping[str, Any], budget: Budget, teams: Mapping[str, str]) -> str:
    lines = ["| algorithm | team | max new tokens per agent | token cap per run (all agents) | "
             "generated tokens per run (measured) | env steps per run (measured) | training s per run |",
             "|---|---|---:|---:|---:|---:|---:|"]
    cap = budget.steps * budget.problems_per_step * budget.group_size * budget.sample_tokens
    for algo in meta["algorithms"]:
        runs = summary["algorithms"].get(algo, {}).get("budget", [])
        lines.append(
            f"| {label(algo)} | {teams[algo]} | {budget.reply_tokens(teams[algo])} | {cap:,} | "
            f"{_per_seed(runs, 'generated_tokens', '{:,}')} | {_per_seed(runs, 'env_steps', '{:,}')} | "
            f"{_per_seed(runs, 'train_s', '{:.1f}')} |"
        )
    return "\n".join(lines) + (
        f"\n\nShared by every algorithm: {budget.steps} steps × {budget.problems_per_step} problem(s) × G={budget.group_size} "
        f"joint samples, learning rate {budget.learning_rate}, LoRA r={budget.lora_r}; held-out evaluation of "
        f"{budget.eval_problems} problems at step 0, every {budget.eval_every} steps and after the last. "
        "Measured values are listed per seed; an env step runs the program in the sandbox at most once."
    )


def sessions_table(sessions: list[Mapping[str, Any]]) -> str:
    lines = ["| command | `uptime` at the start | at the end |", "|---|---|---|"]
    for session in sessions:
        lines.append(f"| `{session['command']}` | {session['uptime_start']} | {session.get('uptime_end', 'not recorded (interrupted)')} |")
    return "\n".join(lines)


def runs_table(summary: Mapping[str, Any]) -> str:
    lines = ["| run | status | wall s | note |", "|---|---|---:|---|"]
    for run in summary["runs"]:
        wall = f"{run['wall_s']:.0f}" if run.get("wall_s") is not None else ""
        note = run["error"].splitlines()[0] if run.get("error") else ""
        lines.append(f"| {run['name']} | {run['status']} | {wall} | {note} |")
    return "\n".join(lines)


def signal_table(summary: Mapping[str, Any]) -> str:
    """Per run, over its training steps: whether the reward could tell its samples apart by correctness."""
    lines = ["| run | steps | groups | groups whose tests vary | mean gradient norm | optimizer steps clipped |",
             "|---|---:|---:|---:|---:|---:|"]
    for run in summary["runs"]:
        signal = run.get("signal")
        if signal:
            lines.append(f"| {run['name']} | {signal['steps']} | {signal['groups']:.0f} | {signal['groups_tests_vary']:.0f} "
                         f"({100 * signal['tests_vary_share']:.0f} %) | {signal['grad_norm_mean']:.3g} | "
                         f"{100 * signal['clipped_share']:.0f} % |")
    return "\n".join(lines) + (
        "\n\nA group is a problem's G joint samples; its tests vary when the siblings differ in the reward's tests "
        "component, the only groups in which correctness moves the advantage. The gradient norm is before "
        "clipping (`max_grad_norm`); each step's values are in `records/runs.json` (`train_log`)."
    )


def samples_section(summary: Mapping[str, Any]) -> str:
    """Each run's first logged training sample of its first and last step, reply by reply."""
    intro = ("One sampled joint reply per run from the first and from the last training step (the first "
             "sample of the step's first group, at the training temperature), with its reward and components.")
    blocks = [intro]
    for run in summary["runs"]:
        for sample in run.get("samples") or ():
            components = ", ".join(f"{k} {v:.2f}" for k, v in (sample.get("components") or {}).items()
                                   if isinstance(v, (int, float)))
            blocks.append(f"**{run['name']}, step {sample['step']}**: reward {sample['reward']:.3f} ({components})")
            for agent, text in sample["replies"].items():
                blocks.append(f"`{agent}`:\n\n" + _quoted(text))
    return "\n\n".join(blocks)


def _quoted(text: str) -> str:
    """A reply as a Markdown block quote, kept verbatim (empty lines too)."""
    lines = text.strip("\n").splitlines() or [""]
    return "\n".join("> " + line if line.strip() else ">" for line in lines)


def limits(meta: Mapping[str, Any], summary: Mapping[str, Any], budget: Budget) -> str:
    done = [r for r in summary["runs"] if r["status"] == "done"]
    failed = [r["name"] for r in summary["runs"] if r["status"] != "done"]
    text = (
        f"{len(done)} finished run(s) over {len(meta['seeds'])} seed(s) per algorithm, scored on "
        f"{len(summary['task_ids'])} held-out problems of `{meta['env']}` with one model ({meta['model']}) after "
        f"{budget.steps} training steps of {budget.problems_per_step * budget.group_size} joint samples each. "
        "The intervals cover the spread over these seeds and these problems only: with this few seeds the "
        "seed-level part of the interval is coarse, and they say nothing about other envs, models, longer "
        "training or other hyper-parameters. Every held-out rate is of one greedy episode per problem (pass@1 on "
        "a coding env); mean reward is on each team's own "
        "scale (the pair's maximum differs from a single agent's), so only the rates compare across "
        "teams, and the coop rate exists only for a team with a helper."
    )
    if failed:
        text += f" Not finished, and left out of every number above: {', '.join(failed)}."
    return text


def _row(title: str, seeds: int, result: Mapping[str, Any], phase: str, shown: list[tuple[str, str]]) -> str:
    cells = [_cell(metric, (result["metrics"].get(metric) or {}).get(phase)) for metric, _ in shown]
    return f"| {title} | {seeds} | " + " | ".join(cells) + " |"


def _cell(metric: str, value: Mapping[str, float] | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    sign = "+" if signed else ""
    if metric == "reward":
        return f"{value['mean']:{sign}.3f} [{value['low']:.3f}, {value['high']:.3f}]"
    unit = "points" if signed else "%"  # a change of a rate is in percentage points
    return f"{100 * value['mean']:{sign}.1f} {unit} [{100 * value['low']:.1f}, {100 * value['high']:.1f}]"


def _per_seed(runs: list[Mapping[str, Any]], key: str, fmt: str) -> str:
    return ", ".join(fmt.format(run[key]) for run in runs) if runs else "n/a"


# ---------------------------------------------------------------- the curves


def plot_training(summary: Mapping[str, Any], path: Path) -> Path | None:
    """Per run and training step: the mean training reward and the share of groups whose tests varied."""
    runs = [run for run in summary["runs"] if run.get("training")]
    if not runs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algorithms = list(dict.fromkeys(run["algo"] for run in runs))
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    panels = (("reward", "training reward (mean of the step's samples)"),
              ("tests_vary_share", "share of groups whose tests vary"))
    for axis, (key, title) in zip(axes, panels):
        for run in runs:
            points = [(p["step"], p[key]) for p in run["training"] if p.get(key) is not None]
            color = f"C{algorithms.index(run['algo'])}"
            axis.plot([s for s, _ in points], [v for _, v in points], color=color, alpha=0.7,
                      label=label(run["algo"]) if run is next(r for r in runs if r["algo"] == run["algo"]) else None)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("training step")
    axes[1].set_ylim(0, 1)
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def plot_curves(summary: Mapping[str, Any], path: Path) -> Path | None:
    """Held-out pass rate and acc (reward where there is no acc) per evaluation step: mean over seeds
    and the 95 % band."""
    series = {algo: r["curves"] for algo, r in summary["algorithms"].items() if any(r["curves"].values())}
    if not series:
        return None
    titles = dict(columns(summary))
    second = "acc" if "acc" in titles else "reward"
    panels = (("pass_rate", titles.get("pass_rate", "held-out pass rate")), (second, "held-out " + titles.get(second, second)))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for axis, (metric, title) in zip(axes, panels):
        for index, (algo, curves) in enumerate(series.items()):
            points = curves.get(metric) or []
            steps = [p["step"] for p in points]
            axis.plot(steps, [p["mean"] for p in points], marker=".", color=f"C{index}", label=label(algo))
            axis.fill_between(steps, [p["low"] for p in points], [p["high"] for p in points], color=f"C{index}", alpha=0.2)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("training step")
        if metric != "reward":
            axis.set_ylim(-0.02, 1.02)
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
