"""File-system facts the sandbox tests depend on."""

from __future__ import annotations

import os
import stat


def private_ancestor(path: str) -> str | None:
    """The highest folder above `path` that other users cannot traverse (e.g. /root), if any."""
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        ancestor = "/" + "/".join(parts[:depth])
        if not os.stat(ancestor).st_mode & stat.S_IXOTH:
            return ancestor
    return None
