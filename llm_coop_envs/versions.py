"""Whether an installed library lies in the version range this package declares for it.

A few private internals of torch, peft and PettingZoo are used where no public API does the same
job (docs/compatibility.md#private-internals). Each use asks :func:`in_tested_range` first and takes
a plain public path when the library is outside its declared range or the private name is gone.
The ranges are read from this package's installed metadata, so pyproject.toml stays the one place
they are written.
"""

from __future__ import annotations

import functools
import importlib.metadata

DISTRIBUTION = "llm-coop-envs"


@functools.cache
def in_tested_range(dist: str) -> bool:
    """True when ``dist`` is installed at a version inside every range this package declares for it;
    False when it is not installed, not declared, or the metadata cannot be read (a source tree that
    was never installed): the callers then take their public path."""
    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name

        installed = importlib.metadata.version(dist)
        declared = [Requirement(line) for line in importlib.metadata.requires(DISTRIBUTION) or ()]
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return False
    ranges = [r.specifier for r in declared if canonicalize_name(r.name) == canonicalize_name(dist)]
    return bool(ranges) and all(r.contains(installed, prereleases=True) for r in ranges)
