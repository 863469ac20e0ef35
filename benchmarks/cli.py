"""``llm-coop eval``: run baselines and trained checkpoints on one env; write JSON, markdown and PNGs.

    llm-coop eval coop_humaneval-v0 -n 10 --methods single,concat,sequential,discussion,env
    llm-coop eval coop_humaneval-v0 --methods single,env --checkpoint magrpo=runs/cpu-demo
    llm-coop eval tldr-v0 -n 4 --problems 20 --scripted replies.json     # no model: fixed replies
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_METHODS = "single,concat,sequential,discussion,env"


def eval_command(argv: Sequence[str]) -> int:
    """Evaluate agents and baselines: pass@k, cooperation, tables, plots.

    Example: llm-coop eval coop_basics-v0 --methods single,env -n 1 --problems 5
    """
    args = _parser().parse_args(list(argv))
    from benchmarks.baselines.methods import get_method
    from benchmarks.evaluate import Entry, EvalConfig, evaluate
    from benchmarks.reporting import write_report
    from benchmarks.reporting.table import markdown_table

    try:
        config = EvalConfig(
            env=args.env, env_kwargs=_env_kwargs(args), split=None if args.split.lower() == "none" else args.split,
            n=args.n, ks=tuple(args.ks), problems=args.problems, task_ids=tuple(args.task_ids or ()),
            batch_size=args.batch_size, env_workers=args.env_workers, seed=args.seed,
        )
        methods = [get_method(name) for name in _names(args.methods)]
        checkpoints = [_parse_checkpoint(item) for item in args.checkpoint]
    except ValueError as error:
        print(f"llm-coop eval: {error}", file=sys.stderr)
        return 2
    agents = _agents(config)
    base_team = _base_team(args, agents) if methods else None
    entries = [Entry(m.name, m, base_team) for m in methods]
    for label, path, method_name in checkpoints:
        entries.append(Entry(label, get_method(method_name), _checkpoint_team(args, path)))
    results = evaluate(config, entries, progress=not args.quiet)
    command = "llm-coop eval " + shlex.join(list(argv))
    paths = write_report(results, args.out, command)
    if not args.quiet:
        print(markdown_table(results["methods"]))
        print("Wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _parser() -> argparse.ArgumentParser:
    from benchmarks.evaluate import EVAL_SAMPLING, EvalConfig
    from trainers.model_cache import DEFAULT_MODEL_LABEL

    defaults = EvalConfig(env="")  # the Python API's defaults are the command line's
    parser = argparse.ArgumentParser(
        prog="llm-coop eval", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + __doc__.split("\n\n")[1].rstrip(),  # the examples of the module docstring
    )
    parser.add_argument("env", nargs="?", default="coop_humaneval-v0", help="registered env id")
    parser.add_argument("--split", default=defaults.split, help="problem split (train/test/all); 'none' to not pass one")
    parser.add_argument("--env-kwargs", default="{}", help='JSON object of extra make() arguments, e.g. \'{"num_turns": 2}\'')
    parser.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated baselines (default {DEFAULT_METHODS}; '' for none)")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="LABEL=PATH[@METHOD]",
                        help="also evaluate a trainer run/checkpoint folder as table row LABEL (method default 'env')")
    parser.add_argument("--model", default="default", help=f"base model for the baselines: 'default' ({DEFAULT_MODEL_LABEL}), Hub id or path")
    parser.add_argument("--scripted", metavar="FILE", help="no model: a JSON file {agent: reply} replayed for every prompt")
    parser.add_argument("-n", type=int, default=defaults.n, help=f"samples per problem (default {defaults.n})")
    parser.add_argument("--ks", type=lambda s: [int(k) for k in s.split(",")], default=list(defaults.ks),
                        help="k values, e.g. " + ",".join(map(str, defaults.ks)))
    parser.add_argument("--problems", type=int, default=defaults.problems, help="only the first N problems of the split")
    parser.add_argument("--task-ids", nargs="*", help="only these task ids")
    parser.add_argument("--temperature", type=float, default=EVAL_SAMPLING.temperature, help="sampling temperature (0 = greedy)")
    parser.add_argument("--top-p", type=float, default=EVAL_SAMPLING.top_p)
    parser.add_argument("--max-new-tokens", type=int, default=EVAL_SAMPLING.max_new_tokens)
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda[:i]")
    parser.add_argument("--backend", default="transformers", help="transformers or vllm")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size, help="episodes advanced together")
    parser.add_argument("--env-workers", type=int, default=defaults.env_workers, help="threads stepping env copies")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--out", default="runs/eval", help="output folder (results.json, results.md, episodes.jsonl, PNGs)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no cost estimate, progress bar or table")
    return parser


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    try:
        kwargs = json.loads(args.env_kwargs)
    except json.JSONDecodeError as error:
        raise ValueError(f"--env-kwargs must be a JSON object: {error}") from None
    if not isinstance(kwargs, dict):
        raise ValueError("--env-kwargs must be a JSON object, e.g. '{\"num_turns\": 2}'.")
    return kwargs


def _parse_checkpoint(item: str) -> tuple[str, str, str]:
    label, sep, rest = item.partition("=")
    if not sep or not label or not rest:
        raise ValueError(f"--checkpoint takes LABEL=PATH[@METHOD], got {item!r}.")
    path, _, method = rest.partition("@")
    return label, path, method or "env"


def _agents(config) -> tuple[str, ...]:
    import llm_coop_envs

    return tuple(llm_coop_envs.make(config.env, **dict(config.env_kwargs)).possible_agents)


def _sampling(args: argparse.Namespace):
    from trainers.config import SamplingConfig

    return SamplingConfig(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens)


def _base_team(args: argparse.Namespace, agents: tuple[str, ...]):
    if args.scripted:
        from benchmarks.baselines.generator import ScriptedGenerator

        script = json.loads(Path(args.scripted).read_text(encoding="utf-8"))
        return dict.fromkeys(agents, ScriptedGenerator(script))
    from benchmarks.baselines.trainers_adapter import base_model_team

    return base_model_team(agents, model=args.model, sampling=_sampling(args), device=args.device, backend=args.backend, seed=args.seed)


def _checkpoint_team(args: argparse.Namespace, path: str):
    from benchmarks.baselines.trainers_adapter import checkpoint_team

    return checkpoint_team(path, sampling=_sampling(args), device=args.device, backend=args.backend)


if __name__ == "__main__":
    raise SystemExit(eval_command(sys.argv[1:]))
