"""The ``llm-coop`` command: list environments, pull the default model, train, evaluate, benchmark.

``envs`` is this package's own command. Every other subcommand belongs to the package that provides it
and is found through the entry-point group :data:`COMMANDS_ENTRY_POINT_GROUP` (``trainers`` adds
``train`` and ``pull-model``, ``benchmarks`` adds ``eval`` and ``bench``); a command's module is imported
only when that command runs or ``llm-coop --help`` lists it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

TRAIN_INSTALL_HINT = "pip install 'llm-coop-envs[train]' (in a clone of the repository: pip install -e '.[train]')"
"""How to get the training extras; every message about a missing extra ends with it."""

COMMANDS_ENTRY_POINT_GROUP = "llm_coop_envs.commands"
"""Where packages declare ``llm-coop`` subcommands: ``name = "module:function"``. The function takes the
arguments after the name and returns an exit code; the first line of its docstring is its help in
``llm-coop --help``, and its docstring lines that start with ``Example:`` join the examples there."""

EXAMPLE_PREFIX = "Example:"

ENVS_EXAMPLES = """Examples:
  llm-coop envs
  llm-coop envs --verbose"""

Command = Callable[[Sequence[str]], "int | None"]


class CommandUnavailable(Exception):
    """A declared subcommand that cannot be loaded; the message is one line that says why."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        targets = command_targets()
    except CommandUnavailable as error:
        print(f"llm-coop: {error}", file=sys.stderr)
        return 2
    if argv and argv[0] in targets:
        return _run(argv[0], targets[argv[0]], argv[1:])
    parser = _parser(targets)
    args = parser.parse_args(argv)
    if args.command == "envs":
        return _list_envs(args.verbose)
    parser.print_help()
    return 0


def command_targets() -> dict[str, str]:
    """Subcommand name -> ``"module:function"``: the installed entry points, then the source checkout's.

    A checkout installed (editable) before a command was declared has no entry point for it yet; its
    ``pyproject.toml`` still declares it, so the command works without installing again.
    """
    targets = _installed_targets()
    for name, target in _checkout_targets().items():
        targets.setdefault(name, target)
    targets.pop("envs", None)  # the env package's own command cannot be replaced
    return targets


def _installed_targets() -> dict[str, str]:
    from importlib.metadata import entry_points

    targets: dict[str, str] = {}
    for entry in entry_points(group=COMMANDS_ENTRY_POINT_GROUP):
        if targets.get(entry.name, entry.value) != entry.value:
            raise CommandUnavailable(
                f"two installed packages declare the command {entry.name!r} ({targets[entry.name]} and "
                f"{entry.value}, group {COMMANDS_ENTRY_POINT_GROUP}); uninstall one of them")
        targets[entry.name] = entry.value
    return targets


def _checkout_targets() -> dict[str, str]:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: installs always carry their entry points there
        return {}
    if not pyproject.is_file():
        return {}
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    if project.get("name") != "llm-coop-envs":
        return {}
    return dict(project.get("entry-points", {}).get(COMMANDS_ENTRY_POINT_GROUP, {}))


def load_command(name: str, target: str) -> Command:
    """Import the function behind ``llm-coop NAME``; :class:`CommandUnavailable` says why it cannot be."""
    module_name, _, function_name = target.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except ImportError as error:
        raise CommandUnavailable(
            f"llm-coop {name} cannot be loaded from {target} ({error}); its package may need the "
            f"training extras: {TRAIN_INSTALL_HINT}") from error
    except AttributeError as error:
        raise CommandUnavailable(f"llm-coop {name} cannot be loaded: {target} has no {function_name!r}") from error
    except Exception as error:  # a plug-in that fails on import costs its own command only
        raise CommandUnavailable(
            f"llm-coop {name} cannot be loaded from {target}: {type(error).__name__}: {error}") from error
    if not callable(function):
        raise CommandUnavailable(f"llm-coop {name} cannot be loaded: {target} is not a function")
    return function


def _run(name: str, target: str, argv: list[str]) -> int:
    try:
        function = load_command(name, target)
    except CommandUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    return int(function(argv) or 0)


def _parser(targets: dict[str, str]) -> argparse.ArgumentParser:
    from llm_coop_envs import __version__

    summaries = {name: _summary(name, target) for name, target in sorted(targets.items())}
    examples = ["  llm-coop envs -v    # the registered envs, their agents and sizes"]
    examples += [example for _, command_examples in summaries.values() for example in command_examples]
    examples.append("  llm-coop COMMAND --help    # every command has its own options and examples")
    parser = argparse.ArgumentParser(
        prog="llm-coop", description=__doc__.splitlines()[0], epilog="Examples:\n" + "\n".join(examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llm-coop-envs {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    envs = commands.add_parser(
        "envs", help="list the registered environment ids", description="List the registered environment ids.",
        epilog=ENVS_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    envs.add_argument("-v", "--verbose", action="store_true", help="also show each env's agents and size")
    for name, (help_text, _) in summaries.items():
        commands.add_parser(name, help=help_text, add_help=False)
    return parser


def _summary(name: str, target: str) -> tuple[str, list[str]]:
    """A command's one-line help and its example lines, from its docstring (or why it cannot load)."""
    try:
        function = load_command(name, target)
    except CommandUnavailable as error:
        return f"(unavailable: {error})", []
    lines = [line.strip() for line in (function.__doc__ or "").strip().splitlines()]
    help_text = lines[0].rstrip(".") if lines else ""
    examples = [f"  {line[len(EXAMPLE_PREFIX):].strip()}" for line in lines if line.startswith(EXAMPLE_PREFIX)]
    return help_text[:1].lower() + help_text[1:], examples


def _list_envs(verbose: bool) -> int:
    """Every registered id, deprecated ones marked with the id to use; ``verbose`` adds agents and
    sizes, or why an env cannot be made here (the ways to give a dataset are said once, at the end)."""
    import llm_coop_envs
    from llm_coop_envs.data.loading import DataNotFoundError

    ids = llm_coop_envs.registered_ids()
    no_data = False
    for env_id in ids:
        env, error, deprecated = _try_make(env_id)
        mark = f"  (deprecated: use {_newest(env_id, ids)})" if deprecated else ""
        if not verbose:
            print(env_id + mark)
        elif env is not None:
            print(f"{env_id:<20} agents={','.join(env.possible_agents):<20} problems={len(env.task)}{mark}")
        else:  # a missing dataset should not hide the other envs
            no_data = no_data or isinstance(error, DataNotFoundError)
            print(f"{env_id:<20} (cannot be made here: {_first_sentence(error)}){mark}")
    if no_data:
        print("\nAn env without its dataset here gets it in one of these ways: run it once with internet (the "
              "Hugging Face Hub dataset is downloaded and cached), set LLM_COOP_DATA_DIR to a folder of the "
              "dataset files, or pass data_path='rows.jsonl' to make(); docs/envs/index.md names each file.")
    return 0


def _try_make(env_id: str) -> tuple[object | None, Exception | None, bool]:
    """The env (or the error that stopped it) and whether making it warned that it is deprecated."""
    import warnings

    import llm_coop_envs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            env, error = llm_coop_envs.make(env_id), None
        except Exception as failure:  # noqa: BLE001 - listed, not raised: the other envs still show
            env, error = None, failure
    deprecated = any(issubclass(w.category, (FutureWarning, DeprecationWarning)) for w in caught)
    return env, error, deprecated


def _newest(env_id: str, ids: list[str]) -> str:
    """The highest version registered under ``env_id``'s name."""
    name = env_id.rsplit("-v", 1)[0]
    versions = [other for other in ids if other.rsplit("-v", 1)[0] == name]
    return max(versions, key=lambda other: int(other.rsplit("-v", 1)[1]))


def _first_sentence(error: Exception | None) -> str:
    """The error's first line, without the list of fixes that follows it."""
    line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return line.split(" Give it data in one of these ways")[0].rstrip(".:")


if __name__ == "__main__":
    raise SystemExit(main())
