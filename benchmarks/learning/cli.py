"""``llm-coop bench``: train algorithms x seeds at an equal budget, then report held-out results with CIs.

    llm-coop bench                                   # the protocol (protocol.json): magrpo, grpo x 3 seeds
    llm-coop bench --quick                           # a few-minute smoke run of it, labelled "not comparable"
    llm-coop bench --algos magrpo,mypkg.my_algo:MyAlgo   # any registered name or module:Class, at the protocol's budget
    llm-coop bench coop_basics-v2 --steps 30         # another env: the protocol's budget, seeds and algorithms
    llm-coop bench --report-only                     # rebuild the report from the run folders

The defaults come from ``benchmarks/learning/protocol.json`` (the leaderboard's protocol on the newest
version of its env; on that env also its env kwargs, held-out sets and clip norm). Runs go to ``runs/bench/<env>/`` and the report to
``runs/bench/<env>/results/``; a table committed under ``benchmarks/results/`` is regenerated only by
naming it: ``--out benchmarks/results/learning/<env>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.learning.plan import (
    Budget, check_algorithms, eval_command, one_line, parse_eval_set,
    plan, teams_of, train_command, untrained_command, untrained_settings,
)
from benchmarks.learning.protocol import PROTOCOL_FILE, load_protocol
from benchmarks.learning.runner import portable_command
from benchmarks.machine import uptime

if TYPE_CHECKING:
    from benchmarks.learning.records import Run

META_FILE = "bench.json"
RESULTS_FOLDER = "results"
"""The report's folder inside the runs folder, unless ``--out`` names another."""
PROJECT_ROOT = Path(__file__).resolve().parents[2]
COMMITTED_RESULTS = "benchmarks/results"
"""Tables kept in the repository: written only when ``--out`` names them (``check_out``)."""
# Settings that must match for a runs folder to be resumed: anything else would mix two experiments.
# Algorithms and seeds may be added: their runs get the same budget as the runs already there.
SAME_EXPERIMENT = ("env", "budget", "overrides", "eval_sets")


def bench_command(argv: Sequence[str]) -> int:
    """Train algorithms x seeds at an equal budget; results with CIs.

    Example: llm-coop bench --steps 10 --seeds 0 1    # MAGRPO vs GRPO at an equal budget
    """
    parser = _parser()
    args = parser.parse_args(list(argv))
    if args.quick:
        apply_quick(args, parser)
    runs_dir = Path(args.runs_dir or f"runs/bench/{args.env}" + ("-quick" if args.quick else ""))
    out = Path(args.out) if args.out else runs_dir / RESULTS_FOLDER
    try:
        check_out(out, named=args.out is not None)
        meta = _load_meta(runs_dir) if args.report_only else _start(args, argv, runs_dir)
    except ValueError as error:
        print(f"llm-coop bench: {error}", file=sys.stderr)
        return 2
    if not args.report_only:
        if not args.quiet:
            print(plan_summary(meta, runs_dir, out), file=sys.stderr)
        if args.untrained_only:
            evaluate_untrained(meta, runs_dir, _timeout_s(args), args.quiet)
            meta["sessions"][-1]["uptime_end"] = uptime()
            _save_meta(meta, runs_dir)
            print(f"Untrained records: {', '.join(str(runs_dir / name) for name in untrained_files(meta))}", file=sys.stderr)
            return 0
        _train(meta, runs_dir, args)
    from benchmarks.learning.recompute import export_records, recompute
    from benchmarks.learning.report import results_table

    # The report is computed from the exported records, exactly as `python -m
    # benchmarks.learning.recompute <out>` computes it from the committed ones; each extra held-out
    # set gets a report of its own in <out>/<set>/.
    for name in meta.get("eval_sets") or {}:
        set_runs = collect_runs(meta, runs_dir, name)
        export_records(out / name, {**meta, "resamples": args.resamples, "eval_set": name}, set_runs, teams_of(meta))
        recompute(out / name, args.resamples)
    runs = collect_runs(meta, runs_dir)
    export_records(out, {**meta, "resamples": args.resamples}, runs, teams_of(meta))
    summary, paths = recompute(out, args.resamples)
    if args.docs_images and "png" in paths:
        # mkdocs serves only docs/: a copy of the curves there lets the docs pages show them.
        paths["docs_png"] = Path(args.docs_images) / f"learning_{meta['env']}_curves.png"
        paths["docs_png"].parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths["png"], paths["docs_png"])
    if not args.quiet:
        print(results_table(summary, Budget.from_dict(meta["budget"]), teams_of(meta)))
        if not meta.get("protocol", {}).get("comparable", True):
            print(meta["protocol"]["label"])
        print("Wrote " + ", ".join(str(p) for p in paths.values()))
    return _exit_code(runs, partial=args.max_runs is not None or args.report_only)


def _exit_code(runs: Sequence[Run], partial: bool) -> int:
    """1 when a run failed, or was left out of a bench meant to train them all; a bench trained in
    parts (``--max-runs``) or only reported is not failed by the runs still to come."""
    bad = {"failed"} if partial else {"failed", "missing"}
    return 1 if any(run.status in bad for run in runs) else 0


# Rough rates on a 2-core CPU with the default model (docs/results.md): one MAGRPO step of G=4 joint
# samples of 256 tokens takes ~16.5 s; greedy held-out episodes decode ~94 tokens/s over a batch of rows.
CPU_STEP_S_PER_SAMPLE_TOKEN = 16.5 / (4 * 256)
CPU_EVAL_TOKENS_PER_S = 94
CPU_LOAD_S = 20  # starting a process and loading the model, per training and per evaluation


def estimate_run_s(budget: Budget, held_out_sets: int = 1) -> float:
    """Seconds one run takes on a 2-core CPU with the default model, roughly: training steps,
    evaluations (one per ``eval_every`` steps and the last, on each held-out set), and the process starts."""
    training = budget.steps * budget.problems_per_step * budget.group_size * budget.sample_tokens * CPU_STEP_S_PER_SAMPLE_TOKEN
    evaluations = (budget.steps // budget.eval_every + 1) * held_out_sets
    evaluating = evaluations * budget.eval_problems * budget.sample_tokens / CPU_EVAL_TOKENS_PER_S
    return training + evaluating + (1 + held_out_sets) * CPU_LOAD_S


def plan_summary(meta: dict[str, Any], runs_dir: Path, out: Path) -> str:
    """What the bench is about to do, before minutes of training: the runs, their budget, a time
    estimate, and where each run's log and the report go."""
    from benchmarks.learning.runner import is_finished

    budget = Budget.from_dict(meta["budget"])
    specs = plan(meta["algorithms"], meta["seeds"])
    eval_sets = meta.get("eval_sets") or {}
    todo = [spec for spec in specs if not is_finished(runs_dir, spec, list(eval_sets))]
    minutes = len(todo) * estimate_run_s(budget, 1 + len(eval_sets)) / 60
    done = f"; {len(specs) - len(todo)} finished before are kept" if len(todo) < len(specs) else ""
    steps = ", ".join(str(step) for step in range(0, budget.steps, budget.eval_every)) + f", {budget.steps}"
    protocol = meta.get("protocol") or {}
    return "\n".join([
        *([f"{protocol['label'].upper()}."] if protocol.get("comparable") is False and protocol.get("label") else []),
        f"Plan: {len(specs)} runs ({', '.join(meta['algorithms'])} x seeds {', '.join(map(str, meta['seeds']))}) on "
        f"{meta['env']}, one after another{done}.",
        f"Each run: {budget.steps} steps x {budget.problems_per_step} problem(s) x G={budget.group_size} joint samples of "
        f"up to {budget.sample_tokens} tokens; held-out evaluation of {budget.eval_problems} problems at steps {steps}.",
        f"Estimated time: about {minutes:.0f} min for {len(todo)} run(s) on a 2-core CPU with the default model "
        "(rough; a GPU is much faster).",
        *([f"Extra held-out sets (each with its report in {out}/<set>/): "
           + "; ".join(f"{name} {kwargs}" for name, kwargs in eval_sets.items())] if eval_sets else []),
        f"Logs: {runs_dir}/<run>.log (e.g. {runs_dir / (specs[0].name + '.log')}); report: {out}/results.md.",
    ])


def check_out(out: Path, *, named: bool) -> None:
    """The report goes into the committed results (``benchmarks/results/``) only when ``--out`` names
    that folder on this command: a default never replaces a table someone else compares against."""
    if not named and is_committed_results(out):
        raise ValueError(f"{out} is inside the committed results ({COMMITTED_RESULTS}/): name it with --out "
                         "to write the table there, or use another --runs-dir")


def is_committed_results(folder: Path) -> bool:
    """Whether ``folder`` lies in this project's committed results folder."""
    committed = (PROJECT_ROOT / COMMITTED_RESULTS).resolve()
    return folder.resolve() == committed or committed in folder.resolve().parents


def collect_runs(meta: dict[str, Any], runs_dir: Path, eval_set: str | None = None):
    """One :class:`Run` per planned (algorithm, seed), read from its folder and its outcome file, with
    the evaluations of the main held-out set or of the extra set ``eval_set``."""
    from benchmarks.learning.records import Run, read_run
    from benchmarks.learning.runner import read_outcome

    from trainers.metrics_log import read_jsonl

    names = meta.get("untrained") if eval_set is None else (meta.get("untrained_sets") or {}).get(eval_set)
    untrained = {algo: runs_dir / name for algo, name in (names or {}).items()}
    runs = []
    for spec in plan(meta["algorithms"], meta["seeds"]):
        outcome = read_outcome(runs_dir, spec)
        path = untrained.get(spec.algo)
        shared = read_jsonl(path) if path is not None and path.is_file() else None
        run = read_run(Run(spec.name, spec.algo, spec.seed, wall_s=outcome.get("wall_s")), runs_dir / spec.name, shared,
                       eval_set)
        if outcome.get("status") == "failed":
            run.status, run.error = "failed", outcome.get("error", "")
        runs.append(run)
    return runs


def _start(args: argparse.Namespace, argv: Sequence[str], runs_dir: Path) -> dict[str, Any]:
    algorithms = [name.strip() for name in args.algos.split(",") if name.strip()]
    if not algorithms or not args.seeds:
        raise ValueError("give at least one algorithm (--algos) and one seed (--seeds)")
    check_algorithms(algorithms)  # before anything trains: a wrong name stops here
    if args.max_runs is not None and args.max_runs < 1:
        raise ValueError(f"--max-runs must be at least 1, got {args.max_runs}")
    protocol = load_protocol()
    if args.env == protocol.env:  # the protocol's own env: its kwargs, held-out sets and clip norm too
        args.set = [*protocol.trainer_settings(args.set), *args.set]
        if not args.eval_set and not args.quick:
            args.eval_set = [f"{name}={json.dumps(dict(kwargs))}" for name, kwargs in protocol.eval_sets.items()]
    budget = Budget(
        steps=args.steps, problems_per_step=args.problems_per_step, group_size=args.group_size,
        sample_tokens=args.sample_tokens, eval_every=args.eval_every, eval_problems=args.eval_problems,
        learning_rate=args.learning_rate, lora_r=args.lora_r, temperature=args.temperature, top_p=args.top_p,
        model=args.model, stop_after_code=args.stop_after_code,
    )
    eval_sets = dict(parse_eval_set(text) for text in args.eval_set)
    if len(eval_sets) != len(args.eval_set):
        raise ValueError("--eval-set names a set twice")
    check_eval_sets(args.env, eval_sets)
    check_setup(args.env, algorithms, budget, args.set, args.seeds[0])
    meta = {
        "env": args.env, "algorithms": algorithms, "seeds": list(args.seeds), "budget": dataclasses.asdict(budget),
        "overrides": list(args.set), "eval_sets": eval_sets, "model": describe_model(budget.model), "package_version": _version(), "machine": machine(),
        "provenance": bench_provenance(args.env, budget), "code": bench_code(algorithms),
        "protocol": protocol_record(protocol, args),
        "sessions": [],
    }
    _check_resumable(meta, runs_dir, reuse=args.reuse)
    meta["teams"] = check_algorithms(meta["algorithms"])
    meta["algorithm_records"] = algorithm_records(meta["algorithms"], meta["overrides"])
    # Every invocation that trained is kept, with the machine's load around it: a resumed benchmark
    # ran in several sessions, under whatever load each one had.
    meta["sessions"].append({"command": "llm-coop bench " + portable_command(list(argv)), "uptime_start": uptime(),
                             "code": meta["code"]})
    return meta


def protocol_record(protocol, args: argparse.Namespace) -> dict[str, Any]:
    """Which protocol the bench ran and whether its numbers compare with other benches of that protocol
    (a ``--quick`` run never does)."""
    if args.quick:
        return {"name": protocol.name, "comparable": False, "label": protocol.quick_label}
    return {"name": protocol.name, "comparable": args.env == protocol.env, "file": PROTOCOL_FILE.name}


QUICK_FLAGS = {"algos": "algorithms", "seeds": "seeds"}


def apply_quick(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``--quick``: the protocol's smoke-run values in place of every default the command did not change."""
    quick = load_protocol().quick
    values = {**quick.get("budget", {}), "algos": ",".join(quick.get("algorithms", [])) or None,
              "seeds": quick.get("seeds")}
    for name, value in values.items():
        if value is not None and getattr(args, name) == parser.get_default(name):
            setattr(args, name, value)


def check_setup(env: str, algorithms: Sequence[str], budget: Budget, overrides: Sequence[str], seed: int) -> None:
    """What each run's ``llm-coop train`` checks before its model loads (the env, its data and held-out
    env, the algorithm, the settings, the model), checked here before ``bench.json`` is written: a bad
    ``--model`` or an env without data is one line, and leaves nothing that blocks the corrected command."""
    from trainers.cli import check_models, check_names
    from trainers.config import load_config

    for algo in algorithms:
        spec = plan([algo], [seed])[0]
        try:
            cfg = load_config(overrides=untrained_settings(spec, env, budget, overrides))
            check_names(cfg)
            check_models(cfg)
        except (ValueError, TypeError, LookupError, OSError) as error:
            message = error.args[0] if isinstance(error, KeyError) and error.args else error
            raise ValueError(" ".join(str(message).split())) from None


def algorithm_records(algorithms: Sequence[str], overrides: Sequence[str]) -> dict[str, Any]:
    """Each algorithm by the import path of its class and its options (the ``--set algo_kwargs...`` every
    run gets), as each run's own provenance records it."""
    from trainers.config import ConfigError, load_config
    from trainers.provenance import algorithm_record

    records = {}
    for algo in algorithms:
        try:
            cfg = load_config(overrides=list(overrides), algo=algo)
        except ConfigError as error:
            raise ValueError(f"--set: {error}") from None
        records[algo] = algorithm_record(cfg)
    return records


def _train(meta: dict[str, Any], runs_dir: Path, args: argparse.Namespace) -> None:
    from benchmarks.learning.runner import run_all

    budget = Budget.from_dict(meta["budget"])
    specs = plan(meta["algorithms"], meta["seeds"])
    commands = [train_command(spec, meta["env"], budget, runs_dir, meta["overrides"]) for spec in specs]
    meta["train_commands"] = {spec.name: portable_command(c) for spec, c in zip(specs, commands)}
    _save_meta(meta, runs_dir)
    timeout = _timeout_s(args)
    evaluate_untrained(meta, runs_dir, timeout, args.quiet)
    eval_sets = meta.get("eval_sets") or {}
    evals = [[eval_command(runs_dir / spec.name, budget)]
             + [eval_command(runs_dir / spec.name, budget, name, kwargs) for name, kwargs in eval_sets.items()]
             for spec in specs]
    run_all(specs, commands, runs_dir, timeout_s=timeout, quiet=args.quiet, eval_commands=evals,
            eval_sets=list(eval_sets), max_runs=args.max_runs)
    meta["sessions"][-1]["uptime_end"] = uptime()
    _save_meta(meta, runs_dir)


def _timeout_s(args: argparse.Namespace) -> float | None:
    return args.timeout_min * 60 if args.timeout_min else None


def evaluate_untrained(meta: dict[str, Any], runs_dir: Path, timeout_s: float | None, quiet: bool) -> None:
    """The untrained team of each algorithm, evaluated once per setting (model, held-out env and
    kwargs, team, greedy sampling, problems) and shared by every seed and algorithm with that setting:
    ``<runs-dir>/untrained/<team>-<key>.jsonl``, named in ``bench.json``."""
    from benchmarks.learning.evaluation import setting, setting_key
    from benchmarks.learning.runner import run_process
    from trainers.config import load_config

    budget = Budget.from_dict(meta["budget"])
    meta["untrained"], meta["untrained_sets"] = {}, {}
    sets = {None: [], **{name: [f"eval_env_kwargs={json.dumps(kwargs)}"]
                         for name, kwargs in (meta.get("eval_sets") or {}).items()}}
    for eval_set, set_override in sets.items():
        names = meta["untrained"] if eval_set is None else meta["untrained_sets"].setdefault(eval_set, {})
        for algo in meta["algorithms"]:
            spec = plan([algo], meta["seeds"][:1])[0]
            overrides = [*meta["overrides"], *set_override]
            cfg = load_config(overrides=untrained_settings(spec, meta["env"], budget, overrides))
            name = f"untrained/{teams_of(meta)[algo]}-{setting_key(setting(cfg, budget.eval_problems))}.jsonl"
            names[algo] = name
            path = runs_dir / name
            if path.is_file():
                continue
            if not quiet:
                print(f"Evaluating the untrained {teams_of(meta)[algo]} team once for every run of it: {path}", file=sys.stderr)
            command = untrained_command(path, spec, meta["env"], budget, overrides)
            error = run_process(command, path.with_suffix(".log"), timeout_s)
            if error:
                print(f"llm-coop bench: the untrained evaluation failed ({error}); see {path.with_suffix('.log')}", file=sys.stderr)
    _save_meta(meta, runs_dir)


def untrained_files(meta: dict[str, Any]) -> list[str]:
    """The untrained records of the main held-out set and of every extra one, relative to the runs folder."""
    names = [*(meta.get("untrained") or {}).values()]
    names += [name for by_algo in (meta.get("untrained_sets") or {}).values() for name in by_algo.values()]
    return sorted(set(names))


def check_eval_sets(env: str, eval_sets: dict[str, dict[str, Any]]) -> None:
    """Each extra held-out set builds, before anything trains: a misspelt kwarg stops here."""
    import llm_coop_envs

    for name, kwargs in eval_sets.items():
        try:
            llm_coop_envs.make(env, **kwargs)
        except Exception as error:  # noqa: BLE001 - the env's own one-line refusal
            raise ValueError(f"--eval-set {name}: {one_line(error)}") from None


def bench_code(algorithms: Sequence[str]) -> dict[str, Any]:
    """The code this bench runs: the project's source hash and git state, and each plug-in algorithm's
    module hash (``None`` for a bundled one, which the source hash covers)."""
    from trainers.code_version import code_record

    records = {algo: code_record(algo) for algo in algorithms}
    project = code_record()
    return {**project, "plugins": {algo: record["plugin"] for algo, record in records.items()}}


def _check_resumable(meta: dict[str, Any], runs_dir: Path, reuse: bool = False) -> None:
    from trainers.code_version import changed_code

    if not (runs_dir / META_FILE).is_file():
        return
    old = _load_meta(runs_dir)
    if not holds_results(old, runs_dir):
        return  # a bench that stopped before any run or evaluation wrote a record: nothing to keep
    changed = [key for key in SAME_EXPERIMENT if (old.get(key) or type(meta[key])()) != meta[key]]
    if changed:
        raise ValueError(f"{runs_dir} holds a benchmark with other settings ({', '.join(changed)} differ): "
                         "use another --runs-dir, or delete that folder to start over")
    code = changed_code(old.get("code"), meta["code"])
    if code and not reuse:
        # Its finished runs would be kept and reported beside new ones as if the same code had run.
        raise ValueError(f"{runs_dir} holds runs of other code ({' and '.join(code)} changed since): use another "
                         "--runs-dir to train afresh, or --reuse to keep its finished runs (each run's records name "
                         "the code it ran)")
    # Adding seeds or algorithms later extends the experiment; the runs already there are kept.
    meta["seeds"] = sorted(set(old["seeds"]) | set(meta["seeds"]))
    meta["algorithms"] += [algo for algo in old["algorithms"] if algo not in meta["algorithms"]]
    meta["sessions"] = old.get("sessions", [])


def holds_results(meta: dict[str, Any], runs_dir: Path) -> bool:
    """Whether a benchmark's folder holds anything a run produced: a run folder with results, or an
    untrained team's records."""
    from trainers.run_folder import holds_results as run_holds_results

    runs = [runs_dir / spec.name for spec in plan(meta.get("algorithms") or [], meta.get("seeds") or [])]
    if any(run_holds_results(run) for run in runs):
        return True
    return any(path.stat().st_size > 0 for path in (runs_dir / "untrained").glob("*.jsonl"))


def _load_meta(runs_dir: Path) -> dict[str, Any]:
    path = runs_dir / META_FILE
    if not path.is_file():
        raise ValueError(f"no benchmark in {runs_dir} ({META_FILE} is missing): run without --report-only first")
    return json.loads(path.read_text(encoding="utf-8"))


def _save_meta(meta: dict[str, Any], runs_dir: Path) -> None:
    runs_dir.mkdir(parents=True, exist_ok=True)
    (runs_dir / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")


def describe_model(model: str) -> str:
    from llm_coop_envs.lm.cache import model_label

    return model_label(model)


def bench_provenance(env: str, budget: Budget) -> dict[str, Any]:
    """The shared provenance record of every run of the benchmark (training sampling settings)."""
    from trainers.provenance import provenance

    sampling = {"temperature": budget.temperature, "top_p": budget.top_p, "sample_tokens": budget.sample_tokens,
                "stop_after_code": budget.stop_after_code}
    return provenance(model=budget.model, sampling=sampling, env_id=env, env_kwargs={})


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version()}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llm-coop-envs")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The examples as written, and every option's default (the protocol's) in ``--help``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, []) or action.help is None:
            return action.help  # a flag that is off, or a folder derived from others: said in its help
        return super()._get_help_string(action)


def _parser() -> argparse.ArgumentParser:
    protocol = load_protocol()
    defaults = protocol.budget
    parser = argparse.ArgumentParser(
        prog="llm-coop bench", description=__doc__.splitlines()[0], formatter_class=_HelpFormatter,
        epilog="Examples:\n" + __doc__.split("\n\n")[1].rstrip()  # the examples of the module docstring
        + "\n\n" + __doc__.split("\n\n")[2].strip(),
    )
    parser.add_argument("env", nargs="?", default=protocol.env, help="registered env id")
    parser.add_argument("--algos", default=",".join(protocol.algorithms), help="comma-separated algorithms: registered names or package.module:Class; the first is compared with the others")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(protocol.seeds), help="training seeds, one run per algorithm and seed")
    parser.add_argument("--quick", action="store_true", help="a few-minute smoke run (the protocol's quick values for every "
                        "setting not given), labelled not comparable; its runs go to runs/bench/<env>-quick")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="training steps, the same for every algorithm")
    parser.add_argument("--problems-per-step", type=int, default=defaults.problems_per_step, help="problems per training step")
    parser.add_argument("--group-size", type=int, default=defaults.group_size, help="G joint samples per problem")
    parser.add_argument("--sample-tokens", type=int, default=defaults.sample_tokens,
                        help="cap on the tokens of one joint sample, summed over agents (a pair's agents get half each)")
    parser.add_argument("--eval-every", type=int, default=defaults.eval_every, help="held-out evaluation every N steps")
    parser.add_argument("--eval-problems", type=int, default=defaults.eval_problems, help="held-out problems per evaluation")
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate, help="AdamW learning rate of the LoRA weights")
    parser.add_argument("--lora-r", type=int, default=defaults.lora_r, help="LoRA rank (alpha is twice it)")
    parser.add_argument("--temperature", type=float, default=defaults.temperature, help="training sampling temperature")
    parser.add_argument("--top-p", type=float, default=defaults.top_p, help="training sampling top-p")
    parser.add_argument("--stop-after-code", action=argparse.BooleanOptionalAction, default=defaults.stop_after_code,
                        help="end a reply at the closing fence of its code block")
    parser.add_argument("--model", default=defaults.model, help=f"'default' ({describe_model('default')}), a Hub id or a path")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra trainer override for every run")
    parser.add_argument("--runs-dir", help="trainer run folders (default runs/bench/<env>)")
    parser.add_argument("--out", help="results folder (default <runs-dir>/results); a committed table under "
                        "benchmarks/results/ is written only when --out names it")
    parser.add_argument("--docs-images", metavar="DIR", help="also copy curves.png to DIR/learning_<env>_curves.png (e.g. docs/images)")
    parser.add_argument("--report-only", action="store_true", help="do not train; rebuild the report from the run folders")
    parser.add_argument("--reuse", action="store_true", help="keep the finished runs of --runs-dir although the project's "
                        "source or a plug-in algorithm changed since they ran")
    parser.add_argument("--timeout-min", type=float, default=None, help="stop a run after this many minutes (it is reported failed)")
    parser.add_argument("--eval-set", action="append", default=[], metavar="NAME={KEY: VALUE, ...}",
                        help="an extra held-out set: the env kwargs that replace the held-out ones (YAML), evaluated "
                             "like the main set, reported in <out>/NAME/; e.g. families={split: heldout_families}")
    parser.add_argument("--max-runs", type=int, default=None, metavar="N",
                        help="train at most N unfinished runs of the plan in this invocation, then report (a long "
                             "benchmark run in parts, each part's records kept before the next)")
    parser.add_argument("--untrained-only", action="store_true",
                        help="only evaluate the untrained teams (e.g. to plan a benchmark's minimum detectable change)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar or table")
    return parser


if __name__ == "__main__":
    raise SystemExit(bench_command(sys.argv[1:]))
