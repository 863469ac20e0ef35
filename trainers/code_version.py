"""Which code produced a result: a hash of the project's Python source, the git commit and whether the
source had uncommitted changes (in a checkout), and a hash of a plug-in algorithm's own module file.

    >>> code_record("mypkg.algo:MyAlgo")
    {"source_sha256": "3f1c…", "git": {"commit": "85099d8…", "dirty": False},
     "plugin": {"module": "mypkg.algo", "file": "algo.py", "sha256": "a9e0…"}}

The source hash covers the ``.py`` files of the three packages (``llm_coop_envs``, ``trainers``,
``benchmarks``) by their paths and contents, and leaves out every ``results`` folder: a commit that only
adds results changes nothing here, while an edit to any module does, committed or not. The commit is
recorded for reading, never compared (it changes with every results commit). Bundled algorithms are
covered by the source hash; an algorithm loaded from outside the project (``package.module:Class``, an
entry point) gets the hash of its module file, so an edited plug-in is told apart from the one that
trained a run. Here in ``trainers`` (which writes the run records) so that ``benchmarks`` reads it without
an upward import.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

PACKAGES = ("llm_coop_envs", "trainers", "benchmarks")
EXCLUDED_FOLDERS = {"results", "__pycache__"}
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def source_files(root: Path = PROJECT_ROOT) -> list[Path]:
    """The ``.py`` files of the three packages under ``root``, results folders left out, in a fixed order."""
    files = []
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            if not EXCLUDED_FOLDERS.intersection(path.relative_to(root).parts):
                files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def source_hash(root: Path = PROJECT_ROOT) -> str:
    """sha256 over each source file's path (relative to ``root``) and contents."""
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def git_state(root: Path = PROJECT_ROOT) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` where ``root`` is a git checkout (``dirty``: the recorded source differs
    from that commit); ``None`` for an installed copy, or where git is missing."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=True)
        return done.stdout.strip()

    if not (root / ".git").exists():
        return None
    pathspecs = [*PACKAGES, *(f":(exclude,glob)**/{name}/**" for name in sorted(EXCLUDED_FOLDERS))]
    try:
        commit = git("rev-parse", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=all", "--", *pathspecs)
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = any(line.rstrip().endswith(".py") for line in changed.splitlines())
    return {"commit": commit, "dirty": dirty}


def module_record(target: Any) -> dict[str, Any] | None:
    """The module file of ``target`` (a class, a function or a module) by name and sha256, when it lies
    outside the project's packages (inside them the source hash covers it); ``None`` otherwise."""
    module = target if inspect.ismodule(target) else sys.modules.get(getattr(target, "__module__", ""), None)
    path = getattr(module, "__file__", None)
    if path is None:
        return None
    path = Path(path).resolve()
    if any(PROJECT_ROOT / package in path.parents for package in PACKAGES):
        return None
    return {"module": module.__name__, "file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


@functools.lru_cache(maxsize=1)
def _project_record() -> dict[str, Any]:
    # Once per process: the code a process runs is the code it imported at its start.
    return {"source_sha256": source_hash(), "git": git_state()}


def code_record(algo: str | Any | None = None) -> dict[str, Any]:
    """The record a run carries: the project's source hash and git state, and ``plugin`` for an
    algorithm (a name ``algo=`` accepts, or its class or object) loaded from outside the project."""
    record = dict(_project_record())
    if algo is not None:
        if isinstance(algo, str):
            from trainers.algorithms.registry import algorithm_factory

            algo = algorithm_factory(algo)
        record["plugin"] = module_record(algo if inspect.isclass(algo) or inspect.isfunction(algo) else type(algo))
    return record


def changed_code(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """What differs between two :func:`code_record`-style bench records (``{"source_sha256", "plugins":
    {algo: record}}``), said for a person: the project's source, and each plug-in by name. A record that
    is missing (older benches recorded none) differs in nothing."""
    if not old:
        return []
    changed = []
    if old.get("source_sha256") and old["source_sha256"] != new.get("source_sha256"):
        changed.append("the project's Python source")
    old_plugins, new_plugins = old.get("plugins") or {}, new.get("plugins") or {}
    for algo in sorted(set(old_plugins) & set(new_plugins)):
        if (old_plugins[algo] or {}).get("sha256") != (new_plugins[algo] or {}).get("sha256"):
            changed.append(f"the plug-in {algo}")
    return changed
