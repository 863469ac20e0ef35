"""``llm-coop train`` and ``llm-coop pull-model`` (also ``python -m trainers train|pull-model``).

    llm-coop train --preset cpu-demo
    llm-coop train --env coop_humaneval-v0 --algo magrpo --config my.yaml steps=50 sampling.temperature=0.7
    llm-coop train --preset cpu-demo --resume          # continue the run's latest checkpoint
    llm-coop pull-model                                # SmolLM2-135M-Instruct into the cache

Precedence: defaults ← ``--preset`` ← ``--config`` ← named flags ← ``key=value`` overrides.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def train_command(argv: Sequence[str]) -> int:
    args = _train_parser().parse_args(list(argv))
    from trainers.config import describe_fields, load_config

    if args.help_config:
        print(describe_fields())
        return 0
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
    try:
        cfg = load_config(args.config, preset=args.preset, overrides=args.overrides, **fields)
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"llm-coop train: {error}", file=sys.stderr)
        return 2
    from trainers.run_folder import RunExistsError

    try:
        run_training(cfg)
    except RunExistsError as error:
        print(f"llm-coop train: {error}", file=sys.stderr)
        return 2
    return 0


def run_training(cfg) -> dict:
    """Train (the trainer evaluates the held-out problems when ``eval_problems``), print the before/after
    table, export the final weights. Returns the ``eval.json`` record (empty without evaluation)."""
    from trainers.trainer import Trainer

    trainer = Trainer(cfg)
    print(f"Training {len(trainer.agents)} agent(s) {list(trainer.agents)} on {cfg.env} with {cfg.algo}; "
          f"run folder {trainer.run_dir}")
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
        print(before_after_table(record))
    if trainer.dist.is_main:
        trainer.policies.save_pretrained(str(trainer.run_dir / "final"))
    trainer.close()
    print(f"Metrics: {trainer.run_dir / 'metrics.jsonl'} (TensorBoard: {trainer.run_dir / 'tensorboard'}); "
          f"weights: {trainer.run_dir / 'final'}")
    return record


def before_after_table(record: dict) -> str:
    lines = ["", "| agents | mean reward | pass rate |", "|---|---:|---:|"]
    for name in ("before", "after"):
        result, problems = record[name], record["problems"]
        solved = round(result["pass_rate"] * problems)
        lines.append(f"| {name} training | {result['reward']:.3f} | {solved}/{problems} ({result['pass_rate']:.0%}) |")
    return "\n".join(lines)


def pull_model_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="llm-coop pull-model", description="Fetch and convert the default model.")
    parser.add_argument("--target", type=Path, default=None, help="folder to write (default: the cache)")
    parser.add_argument("--force", action="store_true", help="convert again even if the folder exists")
    args = parser.parse_args(list(argv))
    from trainers.model_cache import pull_model

    try:
        path = pull_model(args.target, force=args.force)
    except RuntimeError as error:
        print(f"llm-coop pull-model: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


def _train_parser() -> argparse.ArgumentParser:
    from trainers.config import PRESETS

    parser = argparse.ArgumentParser(
        prog="llm-coop train", description="Train LLM agents on a registered env.",
        epilog="Any config field can be set as key=value (nested: sampling.temperature=0.7). "
        "See --help-config for every field.",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    parser.add_argument("--config", type=Path, default=None, help="YAML or TOML config file")
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None, help="named settings to start from")
    parser.add_argument("--env", default=None, help="env id, e.g. coop_humaneval-v0")
    parser.add_argument("--algo", default=None, help="algorithm: magrpo, grpo, mareinforce, marloo, maremax, a registered or installed "
                        "name, or package.module:Class")
    parser.add_argument("--model", default=None, help="'default' (SmolLM2-135M-Instruct), a Hub id or a path")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--run-name", default=None)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--eval-problems", type=int, default=None, help="held-out problems before/after (0: skip)")
    parser.add_argument("--resume", action="store_true", help="continue from the run's latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing run of the same name")
    parser.add_argument("--help-config", action="store_true", help="list every config field and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"train": train_command, "pull-model": pull_model_command}
    if not argv or argv[0] not in commands:
        print("usage: python -m trainers {train,pull-model} [args]  (see --help of each)")
        return 0 if not argv else 2
    return commands[argv[0]](argv[1:])
