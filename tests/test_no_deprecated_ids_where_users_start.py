"""No deprecated or unknown env id where users start.

The places a user starts from are the demo script, the trainer presets, the READMEs, the docs (the
pages, the module docstrings they include and the site's navigation), the help of every ``llm-coop``
command and the bench's defaults (``benchmarks/learning/protocol.json``). Every env id named there must
be registered and current. Whoever deprecates an id these name moves them in the same change.

What counts as an id: ``name-vN`` where ``name`` is a registered env name. An id inside a results path
(``benchmarks/results/learning/coop_procedural-v0/``) names the folder of a past run, and a Markdown
link's target is an address, not an id: both are left out. A name the registry does not know is an
error, unless the same page registers it itself (``register("echo-v0", ...)``: the page's example).

History is allowed to name the ids of its time. In Markdown (the README, the docs pages, the module
docstrings) a section is history when its heading says ``Version history`` or ``Versions``, when its
heading names a version (``What `-v2` adds``, ``Hostile replies against the `v2` rules``: a section about
one version may compare it with the ones before), or when the first line under its heading is the marker
``<!-- history: why -->`` (a record of past runs or measurements, each on the id it ran on). Results
files a page includes (``<!-- results-summary: ... -->``) are records of past runs and are not read. A section runs to the next heading
of the same or a higher level, so a marker under a page's title marks the whole page.

Whether an id is deprecated is read where the fact lives: making it warns (``FutureWarning``), as
``llm-coop envs`` reads it. An id whose make fails without a warning here (its dataset or language model
is missing) cannot be judged on this machine and is skipped with the reason; where the data is present
(CI) it is judged.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import re
from collections import defaultdict
from pathlib import Path

import pytest

import llm_coop_envs
from llm_coop_envs.cli import _try_make

ROOT = Path(__file__).resolve().parents[1]
ID = re.compile(r"(?<![\w-])([a-z][a-z0-9_]*)-v(\d+)\b")
RESULTS_PATH = re.compile(r"[\w./-]*results/[\w./-]*")
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
HISTORY_HEADING = re.compile(r"\b(version history|versions)\b", re.I)
VERSION_HEADING = re.compile(r"(?<![\w-])-?v\d+\b")  # a version alone, not an id's ending
HISTORY_MARKER = re.compile(r"^\s*<!--\s*history\b.*-->\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
SELF_REGISTERED = re.compile(r"register\(\s*[\"']([a-z][a-z0-9_]*)-v\d+[\"']")


# ---------------------------------------------------------------------------- what a text names
def ids_in(text: str) -> list[str]:
    """The ``name-vN`` tokens of ``text``, results paths and link targets left out."""
    text = LINK_TARGET.sub("]()", RESULTS_PATH.sub(" ", text))
    return [f"{name}-v{version}" for name, version in ID.findall(text)]


def outside_history(markdown: str) -> str:
    """``markdown`` without its history sections (see the module docstring); fenced code is never a heading."""
    kept, history_level, in_fence = [], None, False
    lines = markdown.splitlines()
    for number, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if history_level is not None and level <= history_level:
                history_level = None
            if history_level is None and _is_history(heading.group(2), lines[number + 1:]):
                history_level = level
        if history_level is None:
            kept.append(line)
    return "\n".join(kept)


def _is_history(title: str, following: list[str]) -> bool:
    first = next((line for line in following if line.strip()), "")
    return bool(HISTORY_HEADING.search(title) or VERSION_HEADING.search(title) or HISTORY_MARKER.match(first))


# ---------------------------------------------------------------------------- the places users start
def _docs_hook():
    """The docs build's own hook that puts a module's docstring into its page (docs/hooks/env_docstrings.py)."""
    spec = importlib.util.spec_from_file_location("env_docstrings_hook", ROOT / "docs" / "hooks" / "env_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_pages() -> dict[str, str]:
    """The READMEs and every docs page as the site shows it (module docstrings included), history left out."""
    hook = _docs_hook()
    pages = {name: (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "benchmarks/README.md")}
    for path in sorted((ROOT / "docs").rglob("*.md")):
        pages[path.relative_to(ROOT).as_posix()] = hook.on_page_markdown(path.read_text(encoding="utf-8"))
    return {name: outside_history(text) for name, text in pages.items()}


def plain_files() -> dict[str, str]:
    """Files read whole: the demo, the presets, the site's navigation, the bench's protocol."""
    paths = [ROOT / "scripts" / "demo.sh", *sorted((ROOT / "trainers" / "presets").glob("*.toml")),
             ROOT / "mkdocs.yml", ROOT / "benchmarks" / "learning" / "protocol.json"]
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in paths}


def _output_of(command, argv: list[str]) -> str:
    """What a command prints for ``argv`` (``--help`` ends in SystemExit), called in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        command(argv)
    return out.getvalue()


def help_texts() -> dict[str, str]:
    """The help of every ``llm-coop`` command, and the train command's list of config keys."""
    from benchmarks.cli import eval_command
    from benchmarks.learning.cli import bench_command
    from llm_coop_envs.cli import main
    from trainers.cli import pull_model_command, train_command

    calls = {
        "llm-coop --help": (main, ["--help"]), "llm-coop envs --help": (main, ["envs", "--help"]),
        "llm-coop train --help": (train_command, ["--help"]),
        "llm-coop train --help-config": (train_command, ["--help-config"]),
        "llm-coop pull-model --help": (pull_model_command, ["--help"]),
        "llm-coop eval --help": (eval_command, ["--help"]), "llm-coop bench --help": (bench_command, ["--help"]),
    }
    return {name: _output_of(command, argv) for name, (command, argv) in calls.items()}


def bench_defaults() -> dict[str, str]:
    from benchmarks.learning.protocol import load_protocol

    return {"llm-coop bench (default env)": load_protocol().env}


@functools.cache
def named_ids() -> dict[str, list[str]]:
    """Every id named where users start -> the places that name it."""
    sources = {**markdown_pages(), **plain_files(), **help_texts(), **bench_defaults()}
    places: dict[str, list[str]] = defaultdict(list)
    for place, text in sources.items():
        examples = set(SELF_REGISTERED.findall(text))
        for env_id in dict.fromkeys(ids_in(text)):
            if _name(env_id) not in examples:
                places[env_id].append(place)
    return dict(places)


def _name(env_id: str) -> str:
    return env_id.rsplit("-v", 1)[0]


@functools.cache
def made(env_id: str) -> tuple[bool, str]:
    """(deprecated, why it cannot be judged here: empty when it can), from making the id once."""
    env, error, deprecated = _try_make(env_id)
    if deprecated or env is not None:
        return deprecated, ""
    return False, f"{env_id} cannot be made here: {str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}"


def _named_family_ids() -> list[str]:
    names = {_name(env_id) for env_id in llm_coop_envs.registered_ids()}
    return sorted(env_id for env_id in named_ids() if _name(env_id) in names)


# ---------------------------------------------------------------------------- the checks
def test_every_named_id_is_registered():
    registered = set(llm_coop_envs.registered_ids())
    unknown = {env_id: places for env_id, places in named_ids().items() if env_id not in registered}
    assert not unknown, f"ids that are not registered, by the places that name them: {unknown}"


@pytest.mark.parametrize("env_id", _named_family_ids())
def test_every_named_id_is_current(env_id):
    deprecated, unjudged = made(env_id)
    if unjudged:
        pytest.skip(unjudged)
    assert not deprecated, (f"{env_id} is deprecated (making it warns) but is named in {named_ids()[env_id]}: "
                            "move these places to the current id")


def test_every_kind_of_place_is_read():
    """A collector that silently read nothing would pass everything: each kind of place names some id."""
    places = {place for found in named_ids().values() for place in found}
    for expected in ("scripts/demo.sh", "trainers/presets/cpu-demo.toml", "README.md", "docs/index.md",
                     "docs/envs/coop_basics.md", "mkdocs.yml", "llm-coop train --help", "llm-coop eval --help",
                     "llm-coop bench --help", "llm-coop bench (default env)"):
        assert expected in places, expected


def test_a_deprecated_id_is_told_apart_from_a_current_one():
    assert made("coop_basics-v0") == (True, "") and made("coop_basics-v2") == (False, "")


def test_the_rule_for_history_paths_links_and_examples():
    page = "\n".join([
        "# Page", "use coop_basics-v2", "## Versions", "- coop_basics-v0: old", "### detail", "coop_basics-v1",
        "## Past run", "<!-- history: a run on an old id -->", "coop_humaneval-v0",
        "## What `-v1` adds", "tldr-v1", "## Hostile replies against the `v2` rules", "humaneval-v1",
        "## Now in `coop_basics-v2`", "coop_basics-v2 again", "```bash", "# a shell comment, not a heading: Version history", "```", "mbpp-v2",
        "see [the `-v3` levels](tldr.md#calibration-of-the-v3-levels) and benchmarks/results/learning/tldr-v1/",
    ])
    assert ids_in(outside_history(page)) == ["coop_basics-v2", "coop_basics-v2", "coop_basics-v2", "mbpp-v2"]
    assert outside_history("# Title\n<!-- history: all of it -->\ncoop_basics-v0\n## Any\ncoop_basics-v1") == ""
