"""Where and under what load numbers were measured, for the results files."""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any


def machine_info() -> dict[str, Any]:
    """The platform, Python version, processor and core count."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }


def uptime() -> str:
    """The machine's load now: ``uptime``'s line, or the load averages where there is no ``uptime``."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def code_version() -> str:
    """The code a results file measured, as its "Code:" line gives it: the commit (with the source hash
    when the tree's Python files differ from it), or the source hash alone for an installed copy. The
    same record every training run keeps (:mod:`trainers.code_version`)."""
    from trainers.code_version import git_state, source_hash

    state, digest = git_state(), source_hash()[:12]
    if state is None:
        return f"source sha256 `{digest}` (not a git checkout)"
    if state["dirty"]:
        return f"commit `{state['commit'][:7]}` + uncommitted changes (source sha256 `{digest}`)"
    return f"commit `{state['commit'][:7]}`"
