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
    try:
        cfg = load_config(args.config, preset=args.preset, overrides=args.overrides, **fields)
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"llm-coop train: {error}", file=sys.stderr)
        return 2
    run_training(cfg)
    return 0


def run_training(cfg) -> dict:
    """Evaluate (if ``eval_problems``), train, evaluate again, print the before/after table."""
    from trainers.evaluate import evaluate, make_eval_env
    from trainers.trainer import Trainer

    trainer = Trainer(cfg)
    print(f"Training {len(trainer.agents)} agent(s) {list(trainer.agents)} on {cfg.env} with {cfg.algo}; "
          f"run folder {trainer.run_dir}")
    eval_env = make_eval_env(cfg) if cfg.eval_problems else None
    results: dict = {}
    try:
        if eval_env is not None and trainer.step == 0:
            results["before"] = evaluate(eval_env, trainer.backend, cfg, cfg.eval_problems)
        trainer.train()
    except KeyboardInterrupt:
        print(f"\nInterrupted: checkpoint saved at step {trainer.step} in {trainer.run_dir / 'checkpoints'}; "
              "continue with --resume.")
        trainer.close()
        return results
    if eval_env is not None:
        results["after"] = evaluate(eval_env, trainer.backend, cfg, cfg.eval_problems)
        print(before_after_table(results))
        record = {name: vars(result) for name, result in results.items()}
        (trainer.run_dir / "eval.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    if trainer.dist.is_main:
        trainer.policies.save_pretrained(str(trainer.run_dir / "final"))
    trainer.close()
    print(f"Metrics: {trainer.run_dir / 'metrics.jsonl'} (TensorBoard: {trainer.run_dir / 'tensorboard'}); "
          f"weights: {trainer.run_dir / 'final'}")
    return results


def before_after_table(results: dict) -> str:
    lines = ["", "| agents | mean reward | pass rate |", "|---|---:|---:|"]
    for name, result in results.items():
        solved = round(result.pass_rate * result.problems)
        lines.append(f"| {name} training | {result.reward:.3f} | {solved}/{result.problems} ({result.pass_rate:.0%}) |")
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
    parser.add_argument("--algo", default=None, help="algorithm: magrpo, grpo, mareinforce or a registered one")
    parser.add_argument("--model", default=None, help="'default' (SmolLM2-135M-Instruct), a Hub id or a path")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--run-name", default=None)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--eval-problems", type=int, default=None, help="held-out problems before/after (0: skip)")
    parser.add_argument("--resume", action="store_true", help="continue from the run's latest checkpoint")
    parser.add_argument("--help-config", action="store_true", help="list every config field and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"train": train_command, "pull-model": pull_model_command}
    if not argv or argv[0] not in commands:
        print("usage: python -m trainers {train,pull-model} [args]  (see --help of each)")
        return 0 if not argv else 2
    return commands[argv[0]](argv[1:])
