"""The ``llm-coop`` command: list environments, pull the default model, train, evaluate, benchmark.

``envs`` needs only this package; ``train``/``pull-model`` need the ``train`` extra and
``eval``/``bench`` the benchmarks, so those are imported only when asked for.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

TRAIN_INSTALL_HINT = "pip install 'llm-coop-envs[train]' (in a clone of the repository: pip install -e '.[train]')"
"""How to get the training extras; every message about a missing extra ends with it."""

EXAMPLES = """Examples:
  llm-coop envs -v                                  # the registered envs, their agents and sizes
  llm-coop train --preset cpu-demo                  # a short MAGRPO run on the CPU, before/after table
  llm-coop eval coop_basics-v0 --methods single,env -n 1 --problems 5
  llm-coop bench --steps 10 --seeds 0 1             # MAGRPO vs GRPO at an equal budget
  llm-coop COMMAND --help                           # every command has its own options and examples"""

ENVS_EXAMPLES = """Examples:
  llm-coop envs
  llm-coop envs --verbose"""

# subcommand -> ("module:function", one-line help); each function takes argv and returns an exit code
_DELEGATED = {
    "train": ("trainers.cli:train_command", "train agents on an env (MAGRPO by default)"),
    "pull-model": ("trainers.cli:pull_model_command", "fetch and convert the default model into the cache"),
    "eval": ("benchmarks.cli:eval_command", "evaluate agents and baselines: pass@k, cooperation, tables, plots"),
    "bench": ("benchmarks.learning.cli:bench_command", "train algorithms x seeds at an equal budget; results with CIs"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _DELEGATED:
        return _run_delegated(argv[0], argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "envs":
        return _list_envs(args.verbose)
    parser.print_help()
    return 0


def _parser() -> argparse.ArgumentParser:
    from llm_coop_envs import __version__

    parser = argparse.ArgumentParser(
        prog="llm-coop", description=__doc__.splitlines()[0], epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llm-coop-envs {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    envs = commands.add_parser(
        "envs", help="list the registered environment ids", description="List the registered environment ids.",
        epilog=ENVS_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    envs.add_argument("-v", "--verbose", action="store_true", help="also show each env's agents and size")
    for name, (_, help_text) in _DELEGATED.items():
        commands.add_parser(name, help=help_text, add_help=False)
    return parser


def _list_envs(verbose: bool) -> int:
    import llm_coop_envs

    for env_id in llm_coop_envs.registered_ids():
        if not verbose:
            print(env_id)
            continue
        try:
            env = llm_coop_envs.make(env_id)
            print(f"{env_id:<20} agents={','.join(env.possible_agents):<20} problems={len(env.task)}")
        except Exception as error:  # a missing dataset should not hide the other envs
            print(f"{env_id:<20} (cannot be made here: {error})")
    return 0


def _run_delegated(command: str, argv: list[str]) -> int:
    target, _ = _DELEGATED[command]
    module_name, _, function_name = target.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except ImportError as error:
        print(f"llm-coop {command} needs the training extras ({error}): {TRAIN_INSTALL_HINT}", file=sys.stderr)
        return 2
    return int(function(argv) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
