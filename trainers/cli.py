"""``llm-coop train`` and ``llm-coop pull-model`` (also ``python -m trainers train|pull-model``).

    llm-coop train --preset cpu-demo
    llm-coop train --env coop_humaneval-v2 --algo magrpo --config my.yaml steps=50 sampling.temperature=0.7
    llm-coop train --preset cpu-demo --resume          # continue the run's latest checkpoint
    llm-coop pull-model                                # SmolLM2-135M-Instruct into the cache

Precedence: defaults ← ``--preset`` ← ``--config`` ← named flags ← ``key=value`` overrides.
Every configuration error is one line on stderr and exit code 2, before any model loads.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path


TRAIN_EXAMPLES = """Examples:
  llm-coop train --preset cpu-demo                    # the CPU demo: SmolLM2-135M, procedural suite level 1
  llm-coop train --env coop_humaneval-v2 --steps 50 learning_rate=5e-5 sampling.temperature=0.7
  llm-coop train --config my.yaml --run-name exp1     # a YAML/TOML file, then flags, then key=value
  llm-coop train --preset cpu-demo --resume           # continue the run's latest checkpoint
  llm-coop train --help-config                        # every config key with its default

Any config key can be set as key=value (nested: sampling.temperature=0.7)."""

PULL_EXAMPLES = """Examples:
  llm-coop pull-model                                 # into ~/.cache/llm-coop-envs/models
  llm-coop pull-model --target ./smollm2 --force      # another folder, converted again"""

MAIN_EXAMPLES = """Examples:
  python -m trainers train --preset cpu-demo
  python -m trainers train --env coop_humaneval-v2 steps=50 learning_rate=5e-5
  python -m trainers pull-model
  python -m trainers train --help"""

TRAIN_MODULES = ("yaml", "torch", "transformers", "peft")
"""What training imports from the ``train`` extra; checked before anything else runs."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line on stderr (exit code 2), like every config error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def train_command(argv: Sequence[str]) -> int:
    """Train agents on an env (MAGRPO by default).

    Example: llm-coop train --preset cpu-demo    # a short MAGRPO run on the CPU, before/after table
    """
    args = _train_parser().parse_args(list(argv))
    from trainers.config import ConfigError, describe_fields, load_config

    if args.help_config:
        print(describe_fields())
        return 0
    missing = missing_train_modules()
    if missing:
        return _fail("llm-coop train", f"training needs the train extra (missing: {', '.join(missing)}): {_install_hint()}.")
    fields = {
        name: value
        for name, value in {
            "env": args.env, "algo": args.algo, "model": args.model, "steps": args.steps, "run_name": args.run_name,
            "run_dir": args.run_dir, "eval_problems": args.eval_problems,
        }.items()
        if value is not None
    }
    if args.resume:
        fields["resume"] = True
    if args.overwrite:
        fields["overwrite"] = True
    from llm_coop_envs.lm.cache import ModelUnavailable
    from trainers.run_folder import RunExistsError

    try:
        cfg = load_config(args.config, preset=args.preset, overrides=args.overrides, **fields)
        env, eval_env, algorithm = check_names(cfg)
        replaced = check_run_folder(cfg)
        check_resume_checkpoint(cfg)
        check_models(cfg)
    except (ConfigError, ValueError, TypeError, KeyError, LookupError, RunExistsError, ModelUnavailable) as error:
        return _fail("llm-coop train", str(error.args[0]) if isinstance(error, KeyError) else str(error))
    if replaced is not None:
        print(replaced)
    from trainers.checkpoint import CheckpointError

    try:
        run_training(cfg, env, eval_env, algorithm)
    except (RunExistsError, CheckpointError) as error:  # the name taken since the check; a damaged optimizer file
        return _fail("llm-coop train", str(error))
    return 0


def check_run_folder(cfg) -> str | None:
    """Refuse, before any model loads, a run name whose folder already holds a run, unless this run
    resumes it (from a checkpoint) or was told to replace it. Returns the line that says a run is about
    to be replaced (None when nothing is), so that no run disappears without a word on screen."""
    from trainers.run_folder import RunExistsError, prepare_run_folder

    if cfg.run_name is None:
        return None
    try:
        prepare_run_folder(cfg.run_dir, cfg.run_name, cfg.algo, resume=cfg.resume, overwrite=False, clear=False)
    except RunExistsError:
        if not cfg.overwrite:
            raise
        folder = Path(cfg.run_dir) / cfg.run_name
        if cfg.resume:
            return f"No checkpoint to resume in {folder}: starting the run again from step 0 (--overwrite)."
        return (f"Replacing the previous run in {folder} (the demo's run name is reused on every demo run; "
                "--run-name NAME keeps a run of your own)." if cfg.run_name in demo_run_names()
                else f"Replacing the previous run in {folder} (--overwrite).")
    return None


def check_resume_checkpoint(cfg) -> None:
    """The checkpoint ``--resume`` continues from can be read (``state.json``, the trained weights),
    before any model loads: a damaged one is a line that names it and the way out."""
    if not cfg.resume or cfg.run_name is None:
        return
    from trainers.checkpoint import check_checkpoint, latest_checkpoint

    path = latest_checkpoint(Path(cfg.run_dir) / cfg.run_name)
    if path is not None:
        check_checkpoint(path)


def demo_run_names() -> list[str]:
    """The presets' own run names that each run of that preset replaces (``cpu-demo``)."""
    from trainers.config import PRESETS, reuses_own_run

    return [values["run_name"] for values in PRESETS.values() if reuses_own_run(values, values.get("run_name"))]


def check_models(cfg) -> None:
    """Every model of the run can be loaded here (a Hub id needs the Hub or the local cache): an
    unreachable one is a one-line error in seconds, not retries and tracebacks after the env is built."""
    from llm_coop_envs.lm.cache import check_model_available

    for name in {cfg.model, *cfg.agent_models.values()}:
        check_model_available(name)


def missing_train_modules() -> list[str]:
    """The modules of the ``train`` extra that cannot be imported here."""
    return [name for name in TRAIN_MODULES if _find_spec(name) is None]


def check_names(cfg) -> tuple:
    """The env can be made (its id, kwargs and data; the held-out env too) and the algorithm exists,
    before any model loads: a mistake there is a one-line error, not a traceback after the load.
    Returns the training env, the held-out env (None without evaluation) and the algorithm, built
    once here, for the trainer to use."""
    import llm_coop_envs
    from trainers.algorithms.options import build_algorithm
    from trainers.config import ConfigError
    from trainers.evaluate import make_eval_env

    llm_coop_envs.spec(cfg.env)
    try:
        algorithm = build_algorithm(cfg)  # names first: they need no data
    except (ConfigError, ValueError, TypeError, KeyError):
        raise
    except Exception as error:  # noqa: BLE001 - a user's module may raise anything on import
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        if not isinstance(error, ImportError):
            message = f"{type(error).__name__}: {message}"
        raise ConfigError(f"--algo {cfg.algo}: {' '.join(message.split())}") from None
    try:
        env = llm_coop_envs.make(cfg.env, **cfg.env_kwargs)
        eval_env = make_eval_env(cfg) if cfg.eval_problems else None
    except (TypeError, ValueError, OSError) as error:
        raise ConfigError(f"env {cfg.env} with env_kwargs {dict(cfg.env_kwargs)}: {error}") from None
    return env, eval_env, algorithm


def run_training(cfg, env=None, eval_env=None, algorithm=None) -> dict:
    """Train (the trainer evaluates the held-out problems when ``eval_problems`` and exports the final
    weights), print the before/after table. Returns the ``eval.json`` record (empty without evaluation).
    ``env``/``eval_env``/``algorithm``: already made from ``cfg`` (else the trainer makes them)."""
    import time

    from trainers.trainer import Trainer

    started = time.monotonic()
    trainer = Trainer(cfg, env=env, eval_env=eval_env, algorithm=algorithm)
    from llm_coop_envs.lm.cache import model_label

    print(f"Training {len(trainer.agents)} agent(s) {list(trainer.agents)} on {cfg.env} with {cfg.algo}, model "
          f"{model_label(cfg.model)}; run folder {trainer.run_dir}")
    try:
        trainer.train()
    except KeyboardInterrupt:
        print(f"\nInterrupted: checkpoint saved at step {trainer.step} in {trainer.run_dir / 'checkpoints'}; "
              f"continue with --resume --run-name {trainer.run_dir.name}.")
        trainer.close()
        return {}
    summary_path = trainer.run_dir / "eval.json"
    record = json.loads(summary_path.read_text(encoding="utf-8")) if trainer.evaluations else {}
    if record:
        from trainers.before_after import before_after_report, eval_records

        records = eval_records(trainer.run_dir)  # per problem: the table gets paired intervals
        print(before_after_report(*records) if records else before_after_table(record))
        from trainers.draws import run_twin_line

        twins = run_twin_line(trainer, record.get("problems", 0))
        if twins:
            print(twins)
    trainer.close()  # train() has exported the final weights
    print(f"Metrics: {trainer.run_dir / 'metrics.jsonl'} (TensorBoard: {trainer.run_dir / 'tensorboard'}); "
          f"weights: {trainer.run_dir / 'final'}")
    if trainer.dist.is_main:
        from trainers.curve import plot_run

        picture = plot_run(trainer.run_dir)
        if picture is not None:
            print(f"Training curve: {picture}")
        print(f"Took {_minutes(time.monotonic() - started)} (model loading, training and evaluations).")
    return record


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def before_after_table(record: dict) -> str:
    """Mean reward, pass rate and, when the env runs tests, the mean share of tests passed (acc)."""
    with_tests = all(record[name].get("tests_passed") is not None for name in ("before", "after"))
    header = "| agents | mean reward | pass rate |" + (" acc (tests passed) |" if with_tests else "")
    lines = ["", header, "|---|---:|---:|" + ("---:|" if with_tests else "")]
    for name in ("before", "after"):
        result, problems = record[name], record["problems"]
        solved = round(result["pass_rate"] * problems)
        row = f"| {name} training | {result['reward']:.3f} | {solved}/{problems} ({result['pass_rate']:.0%}) |"
        lines.append(row + (f" {result['tests_passed']:.1%} |" if with_tests else ""))
    return "\n".join(lines)


def pull_model_command(argv: Sequence[str]) -> int:
    """Fetch and convert the default model into the cache.

    Example: llm-coop pull-model    # SmolLM2-135M-Instruct into ~/.cache/llm-coop-envs/models
    """
    parser = OneLineParser(
        prog="llm-coop pull-model", description="Fetch and convert the default model.", epilog=PULL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--target", type=Path, default=None, help="folder to write (default: the cache)")
    parser.add_argument("--force", action="store_true", help="convert again even if the folder exists")
    args = parser.parse_args(list(argv))
    missing = [name for name in ("torch", "transformers", "gguf") if _find_spec(name) is None]
    if missing:
        return _fail("llm-coop pull-model", f"converting the model needs the train extra (missing: {', '.join(missing)}): {_install_hint()}.")
    from llm_coop_envs.lm.cache import pull_model

    try:
        path = pull_model(args.target, force=args.force)
    except RuntimeError as error:
        print(f"llm-coop pull-model: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


def _train_parser() -> argparse.ArgumentParser:
    from trainers.config import PRESETS

    parser = OneLineParser(
        prog="llm-coop train", description="Train LLM agents on a registered env.", epilog=TRAIN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    parser.add_argument("--config", type=Path, default=None, help="YAML or TOML config file")
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None, help="named settings to start from")
    parser.add_argument("--env", default=None, help="env id, e.g. coop_humaneval-v2")
    parser.add_argument("--algo", default=None, help="algorithm: magrpo, grpo, mareinforce, marloo, maremax, mappo, iac, maac, a registered or installed "
                        "name, or package.module:Class")
    from llm_coop_envs.lm.cache import DEFAULT_MODEL_LABEL

    parser.add_argument("--model", default=None, help=f"'default' ({DEFAULT_MODEL_LABEL}), a Hub id or a path")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--run-name", default=None)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--eval-problems", type=int, default=None, help="held-out problems before/after (0: skip)")
    parser.add_argument("--resume", action="store_true", help="continue from the run's latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing run of the same name")
    parser.add_argument("--help-config", action="store_true", help="list every config field and exit")
    return parser


def _main_parser() -> argparse.ArgumentParser:
    from llm_coop_envs import __version__

    parser = OneLineParser(
        prog="python -m trainers", description="Train LLM agents on llm_coop_envs environments.",
        epilog=MAIN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llm-coop-envs {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("train", help="train agents on an env (MAGRPO by default)", add_help=False)
    commands.add_parser("pull-model", help="fetch and convert the default model into the cache", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"train": train_command, "pull-model": pull_model_command}
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    parser = _main_parser()
    try:
        parser.parse_args(argv)  # --help, --version and unknown commands end here
    except SystemExit as end:
        return int(end.code or 0)
    parser.print_help()
    return 0


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _install_hint() -> str:
    from trainers.config import INSTALL_HINT

    return INSTALL_HINT


def _find_spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
