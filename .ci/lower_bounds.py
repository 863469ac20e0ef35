"""Print the requirements of the lower-bound test run (one per line), read from pyproject.toml.

The packages in FLOORED are pinned to the lowest version pyproject.toml allows (``name>=X`` becomes
``name==X``); every other dependency of the base install and the ``train``, ``dev`` and ``claims`` extras is
listed as declared. ``.ci/lower_bounds.sh`` installs them and runs the tests that exercise those
packages. ``python .ci/lower_bounds.py --check`` only checks that every floored package has a floor.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

FLOORED = ("pettingzoo", "gymnasium", "transformers", "peft", "accelerate")
"""Pinned to their lower bounds: the libraries whose APIs (and private internals) the code relies on."""
NOT_INSTALLED = {
    "torch": "the index holds only CUDA builds of old torch releases (gigabytes): the run keeps the "
             "CPU build setup.sh installs, and tests/test_dependency_bounds.py checks torch's floor "
             "against the APIs the code uses",
    "trl": "only the TRL adapter's tests use it, and the pinned trl needs a newer transformers",
}
EXTRAS = ("train", "dev", "claims")  # claims: the current writing ids (-v5) read it at make
ROOT = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_FLOOR = re.compile(r">=\s*([0-9][0-9a-zA-Z.]*)")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirement strings of the base install and EXTRAS, in order, without repeats."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    seen, requirements = set(), []
    for requirement in [*project["dependencies"], *(r for e in EXTRAS for r in project["optional-dependencies"][e])]:
        name = normalise(_NAME.match(requirement)[1])
        if name not in seen:
            seen.add(name)
            requirements.append(requirement)
    return requirements


def floor(requirement: str) -> str | None:
    """The ``>=`` version of a requirement string (None when it has none)."""
    found = _FLOOR.search(requirement.split(";")[0])
    return found[1] if found else None


def lower_bound_requirements(requirements: list[str]) -> list[str]:
    lines = []
    for requirement in requirements:
        name = normalise(_NAME.match(requirement)[1])
        if name in NOT_INSTALLED:
            continue
        if name in FLOORED:
            version = floor(requirement)
            if version is None:
                raise SystemExit(f"{name} has no lower bound in pyproject.toml: {requirement!r}")
            lines.append(f"{name}=={version}")
        else:
            lines.append(requirement)
    missing = [name for name in FLOORED if not any(line.startswith(f"{name}==") for line in lines)]
    if missing:
        raise SystemExit(f"not declared in pyproject.toml: {', '.join(missing)}")
    return lines


if __name__ == "__main__":
    lines = lower_bound_requirements(declared())
    if "--check" not in sys.argv[1:]:
        print("\n".join(lines))
