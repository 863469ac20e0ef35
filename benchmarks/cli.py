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
    args = _parser().parse_args(list(argv))
    from benchmarks.baselines.methods import get_method
    from benchmarks.evaluate import Entry, EvalConfig, evaluate
    from benchmarks.reporting import write_report
    from benchmarks.reporting.table import markdown_table

    try:
        config = EvalConfig(
            env=args.env, env_kwargs=_env_kwargs(args), n=args.n, ks=tuple(args.ks), problems=args.problems,
            task_ids=tuple(args.task_ids or ()), batch_size=args.batch_size, env_workers=args.env_workers, seed=args.seed,
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
    total = len(entries) * config.n * (len(config.task_ids) or _problem_count(config))
    with _progress(total, args.quiet) as bar:
        results = evaluate(config, entries, on_episode=lambda record: bar.update(1))
    command = "llm-coop eval " + shlex.join(list(argv))
    paths = write_report(results, args.out, command)
    if not args.quiet:
        print(markdown_table(results["methods"]))
        print("Wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llm-coop eval", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + __doc__.split("\n\n")[1].rstrip(),  # the examples of the module docstring
    )
    parser.add_argument("env", nargs="?", default="coop_humaneval-v0", help="registered env id")
    parser.add_argument("--split", default="test", help="problem split (train/test/all); 'none' to not pass one")
    parser.add_argument("--env-kwargs", default="{}", help='JSON object of extra make() arguments, e.g. \'{"num_turns": 2}\'')
    parser.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated baselines (default {DEFAULT_METHODS}; '' for none)")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="LABEL=PATH[@METHOD]",
                        help="also evaluate a trainer run/checkpoint folder as table row LABEL (method default 'env')")
    from trainers.model_cache import DEFAULT_MODEL_LABEL

    parser.add_argument("--model", default="default", help=f"base model for the baselines: 'default' ({DEFAULT_MODEL_LABEL}), Hub id or path")
    parser.add_argument("--scripted", metavar="FILE", help="no model: a JSON file {agent: reply} replayed for every prompt")
    parser.add_argument("-n", type=int, default=10, help="samples per problem (default 10)")
    parser.add_argument("--ks", type=lambda s: [int(k) for k in s.split(",")], default=[1, 3, 5, 10], help="k values, e.g. 1,3,5,10")
    parser.add_argument("--problems", type=int, help="only the first N problems of the split")
    parser.add_argument("--task-ids", nargs="*", help="only these task ids")
    parser.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (0 = greedy)")
    parser.add_argument("--top-p", type=float, default=0.95)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda[:i]")
    parser.add_argument("--backend", default="transformers", help="transformers or vllm")
    parser.add_argument("--batch-size", type=int, default=16, help="episodes advanced together")
    parser.add_argument("--env-workers", type=int, default=4, help="threads stepping env copies")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/eval", help="output folder (results.json, results.md, episodes.jsonl, PNGs)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar or table")
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
    if args.split.lower() != "none":
        kwargs.setdefault("split", args.split)
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


def _problem_count(config) -> int:
    import llm_coop_envs

    size = len(llm_coop_envs.make(config.env, **dict(config.env_kwargs)).task)
    return min(size, config.problems or size)


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


class _progress:
    """A tqdm bar on stderr (or nothing when quiet)."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet, self.bar = total, quiet, None

    def __enter__(self):
        if not self.quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="episode", file=sys.stderr)
        return self

    def update(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


if __name__ == "__main__":
    raise SystemExit(eval_command(sys.argv[1:]))
