"""``llm-coop eval``: run baselines and trained checkpoints on one env; write JSON, markdown and PNGs.

    llm-coop eval coop_basics-v2 -n 10 --methods single,concat,sequential,discussion,env
    llm-coop eval coop_basics-v2 --methods single,env --checkpoint magrpo=runs/cpu-demo
    llm-coop eval tldr-v5 -n 4 --problems 20 --scripted replies.json     # fixed replies: no policy model
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_METHODS = "single,concat,sequential,discussion,env"


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line on stderr (exit code 2), as the other commands do."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


INPUT_ERRORS = (ValueError, TypeError, LookupError, OSError)
"""What a bad input raises (a bad value, an unknown env, method, env argument or task id, a missing file,
dataset, checkpoint or model): each is one line and exit code 2, never a traceback."""


def eval_command(argv: Sequence[str]) -> int:
    """Evaluate agents and baselines: pass@k, cooperation, tables, plots.

    Example: llm-coop eval coop_basics-v2 --methods single,env -n 1 --problems 5
    """
    args = _parser().parse_args(list(argv))
    args.out = args.out or f"runs/eval/{time.strftime('%Y%m%d-%H%M%S')}"  # a fresh folder, as train's runs
    from benchmarks.evaluate import Entry, evaluate
    from benchmarks.reporting import write_report
    from benchmarks.reporting.table import markdown_table, sampling_line

    try:
        check_out_folder(Path(args.out), args.overwrite)
        config, methods, checkpoints, agents = _prepare(args)
        base_team = _base_team(args, agents) if methods else None
        entries = [Entry(m.name, m, base_team) for m in methods]
        entries += [Entry(label, method, _checkpoint_team(args, path)) for label, path, method in checkpoints]
    except INPUT_ERRORS as error:
        return _fail(error)
    results = evaluate(config, entries, progress=not args.quiet)
    command = "llm-coop eval " + shlex.join(list(argv))
    for name in _report_files(Path(args.out)):  # --overwrite: no plot of the earlier evaluation stays
        (Path(args.out) / name).unlink()
    paths = write_report(results, args.out, command)
    if not args.quiet:
        print(markdown_table(results["methods"]))
        print(sampling_line(results["methods"]))
        print("Wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def check_out_folder(out: Path, overwrite: bool) -> None:
    """An ``--out`` that holds an earlier evaluation is refused, as ``llm-coop train`` refuses a run name
    in use, unless ``--overwrite`` asks to replace it. Checked before any model loads."""
    found = _report_files(out)
    if found and not overwrite:
        raise FileExistsError(f"--out {out} already holds an evaluation ({', '.join(found)}): add --overwrite to "
                              "replace it, or give another --out (without --out each evaluation gets a fresh folder).")


def _report_files(out: Path) -> list[str]:
    from benchmarks.reporting.files import REPORT_FILES

    return [name for name in REPORT_FILES if (out / name).exists()]


def _prepare(args: argparse.Namespace) -> tuple[Any, list, list[tuple[str, str, Any]], tuple[str, ...]]:
    """Every input checked before a model loads: the settings, the methods, the checkpoint folders, the
    env (id, arguments, data) and its task ids, the scripted replies and the model."""
    from benchmarks.baselines.methods import get_method
    from benchmarks.evaluate import EvalConfig, _pick_task_ids

    config = EvalConfig(
        env=args.env, env_kwargs=_env_kwargs(args), split=None if args.split.lower() == "none" else args.split,
        n=args.n, ks=tuple(_ks(args)), problems=args.problems, task_ids=tuple(args.task_ids or ()),
        batch_size=args.batch_size, env_workers=args.env_workers, seed=args.seed,
    )
    methods = [get_method(name) for name in _names(args.methods)]
    checkpoints = [(label, path, get_method(method)) for label, path, method in map(_parse_checkpoint, args.checkpoint)]
    if not methods and not checkpoints:
        raise ValueError("nothing to evaluate: give --methods or --checkpoint")
    env = _env(config)
    _pick_task_ids(env, config)  # an unknown task id stops here
    _sampling(args)
    if args.scripted:
        _read_script(args.scripted)
    elif methods:
        from llm_coop_envs.lm.cache import check_model_available

        check_model_available(args.model)
    return config, methods, checkpoints, tuple(env.possible_agents)


def _fail(error: BaseException) -> int:
    """One line on stderr and exit code 2, as every llm-coop command reports a bad input."""
    message = error.args[0] if isinstance(error, KeyError) and error.args else error
    if type(error).__name__ == "ValidationError":  # pydantic, from the sampling settings
        from trainers.config import one_line

        message = one_line(error)
    print(f"llm-coop eval: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def _parser() -> argparse.ArgumentParser:
    from benchmarks.evaluate import EVAL_SAMPLING, EvalConfig
    from llm_coop_envs.lm.cache import DEFAULT_MODEL_LABEL

    defaults = EvalConfig(env="")  # the Python API's defaults are the command line's
    parser = OneLineParser(
        prog="llm-coop eval", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + __doc__.split("\n\n")[1].rstrip(),  # the examples of the module docstring
    )
    parser.add_argument("env", nargs="?", default="coop_basics-v2", help="registered env id (default coop_basics-v2: packaged, no download)")
    parser.add_argument("--split", default=defaults.split, help="problem split (train/test/all); 'none' to not pass one")
    parser.add_argument("--env-kwargs", default="{}", help='JSON object of extra make() arguments, e.g. \'{"num_turns": 2}\'')
    parser.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated baselines (default {DEFAULT_METHODS}; '' for none)")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="LABEL=PATH[@METHOD]",
                        help="also evaluate a trainer run/checkpoint folder as table row LABEL (method default 'env')")
    parser.add_argument("--model", default="default", help=f"base model for the baselines: 'default' ({DEFAULT_MODEL_LABEL}), Hub id or path")
    parser.add_argument("--scripted", metavar="FILE", help="no model: a JSON file {agent: reply} replayed for every prompt")
    parser.add_argument("-n", type=int, default=defaults.n, help=f"samples per problem (default {defaults.n})")
    parser.add_argument("--ks", type=lambda s: [int(k) for k in s.split(",")], default=None,
                        help="k values, e.g. " + ",".join(map(str, defaults.ks)) + " (default: those up to -n)")
    parser.add_argument("--problems", type=int, default=defaults.problems,
                        help="only the first N problems of the split (the packaged suites' held-out splits take their "
                        "tiers or families in turns: docs/evaluation.md)")
    parser.add_argument("--task-ids", nargs="*", help="only these task ids")
    parser.add_argument("--temperature", type=float, default=EVAL_SAMPLING.temperature, help="sampling temperature (0 = greedy)")
    parser.add_argument("--top-p", type=float, default=EVAL_SAMPLING.top_p)
    parser.add_argument("--max-new-tokens", type=int, default=EVAL_SAMPLING.max_new_tokens)
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda[:i]")
    parser.add_argument("--backend", default="transformers", help="transformers or vllm")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size, help="episodes advanced together")
    parser.add_argument("--env-workers", type=int, default=defaults.env_workers, help="threads stepping env copies")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--out", default=None, help="output folder (results.json, results.md, episodes.jsonl, PNGs); "
                        "default runs/eval/<date>-<time>, a fresh one each time; one that holds an evaluation is refused")
    parser.add_argument("--overwrite", action="store_true", help="replace the evaluation already in --out")
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


def _ks(args: argparse.Namespace) -> list[int]:
    """The k values asked for; by default those up to ``-n`` (pass@10 of one sample is no number)."""
    if args.ks is not None:
        return args.ks
    from benchmarks.metrics.pass_at_k import DEFAULT_KS

    return [k for k in DEFAULT_KS if k <= args.n] or [1]


def _parse_checkpoint(item: str) -> tuple[str, str, str]:
    label, sep, rest = item.partition("=")
    if not sep or not label or not rest:
        raise ValueError(f"--checkpoint takes LABEL=PATH[@METHOD], got {item!r}.")
    path, _, method = rest.partition("@")
    if not Path(path).exists():
        raise FileNotFoundError(f"--checkpoint {label}: {path} does not exist (give a run folder or one of its checkpoints).")
    return label, path, method or "env"


def _env(config):
    """The env the entries play, made once to check its id, arguments and data."""
    import llm_coop_envs

    return llm_coop_envs.make(config.env, **dict(config.env_kwargs))


def _read_script(path: str) -> dict[str, str]:
    """The ``--scripted`` replies: a JSON object of agent name to reply text."""
    try:
        script = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"--scripted {path} does not exist.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"--scripted {path} is not a JSON file: {error}.") from None
    if not isinstance(script, dict) or not all(isinstance(v, str) for v in script.values()):
        raise ValueError(f'--scripted {path} must hold a JSON object of agent to reply text, e.g. {{"main": "def f(): ..."}}.')
    return script


def _sampling(args: argparse.Namespace):
    from trainers.config import SamplingConfig

    return SamplingConfig(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens)


def _base_team(args: argparse.Namespace, agents: tuple[str, ...]):
    if args.scripted:
        from benchmarks.baselines.generator import ScriptedGenerator

        return dict.fromkeys(agents, ScriptedGenerator(_read_script(args.scripted)))
    from benchmarks.baselines.trainers_adapter import base_model_team

    return base_model_team(agents, model=args.model, sampling=_sampling(args), device=args.device, backend=args.backend, seed=args.seed)


def _checkpoint_team(args: argparse.Namespace, path: str):
    from benchmarks.baselines.trainers_adapter import checkpoint_team

    return checkpoint_team(path, sampling=_sampling(args), device=args.device, backend=args.backend)


if __name__ == "__main__":
    raise SystemExit(eval_command(sys.argv[1:]))
