"""The version ranges in pyproject.toml agree with what the code uses.

Each floor is at least the first release with every API the code relies on (the table below, each
row checked to be still in use), the libraries the code leans on have an upper bound, the installed
versions lie inside the ranges, and the lower-bound CI run (``.ci/lower_bounds.sh``) pins exactly the
declared floors. ``docs/compatibility.md`` explains the ranges.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".ci"))
import lower_bounds  # noqa: E402  (.ci/lower_bounds.py)

SOURCES = ("llm_coop_envs", "trainers", "benchmarks")

# (distribution, first version that has it, text the code contains, what needs that version)
USES = [
    ("pettingzoo", "1.25", "_test_observation_space_compatibility",
     "check_env replaces this private check of PettingZoo's api_test (added in 1.25) for text spaces"),
    ("gymnasium", "1.0", "from pettingzoo",
     "pettingzoo 1.25 (the floor above) requires gymnasium>=1.0"),
    ("torch", "2.6", "from torch.distributed.fsdp import fully_shard",
     "FSDP2's public fully_shard and FSDPModule appeared in torch.distributed.fsdp in 2.6"),
    ("transformers", "4.56", "from_pretrained(path, dtype=torch.float32)",
     "from_pretrained(dtype=...) replaced torch_dtype in 4.56; older releases ignore it"),
    ("huggingface_hub", "0.25", "from huggingface_hub.errors import HfHubHTTPError",
     "HfHubHTTPError moved to huggingface_hub.errors in 0.25 (0.24 has the module without it)"),
    ("pydantic", "2.0", "from pydantic.dataclasses import dataclass",
     "pydantic 2 dataclasses and field_validator"),
]
UPPER_BOUNDED = ("pettingzoo", "gymnasium", "torch", "transformers", "peft", "accelerate")
"""The libraries whose APIs the code relies on: each stops before its next major release."""


def declared() -> dict[str, Requirement]:
    return {lower_bounds.normalise(r.name): r for r in map(Requirement, lower_bounds.declared())}


def floor_of(requirement: Requirement) -> Version | None:
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return max(floors) if floors else None


def code_contains(text: str) -> bool:
    return any(text in path.read_text(encoding="utf-8")
               for source in SOURCES for path in (ROOT / source).rglob("*.py"))


@pytest.mark.parametrize(("dist", "needed", "usage", "why"), USES, ids=[f"{u[0]}-{u[1]}" for u in USES])
def test_each_floor_has_what_the_code_uses(dist, needed, usage, why):
    assert code_contains(usage), f"the code no longer contains {usage!r}: drop this row (and maybe lower the floor)"
    floor = floor_of(declared()[lower_bounds.normalise(dist)])
    assert floor is not None and floor >= Version(needed), f"{dist}>={floor} but {why}: raise the floor to {needed}"


def test_the_libraries_we_lean_on_have_an_upper_bound():
    requirements = declared()
    for dist in UPPER_BOUNDED:
        ceilings = [s for s in requirements[dist].specifier if s.operator in ("<", "<=")]
        assert ceilings, f"{dist} has no upper bound in pyproject.toml"


def test_every_dependency_has_a_floor():
    for name, requirement in declared().items():
        assert floor_of(requirement) is not None or any(s.operator == "==" for s in requirement.specifier) or \
            "==" in str(requirement.specifier), f"{name} has no lower bound"


def test_the_installed_versions_are_inside_the_ranges():
    for name, requirement in declared().items():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra that is not installed here
        assert requirement.specifier.contains(installed, prereleases=True), (
            f"{name} {installed} is installed but pyproject.toml says {requirement}"
        )


def test_the_lower_bound_run_pins_the_declared_floors():
    pins = dict(line.split("==") for line in lower_bounds.lower_bound_requirements(lower_bounds.declared())
                if "==" in line and not line.startswith(("pytest", "trl")))
    requirements = declared()
    for dist in lower_bounds.FLOORED:
        assert Version(pins[dist]) == floor_of(requirements[dist]), f"{dist}: {pins[dist]} is not the declared floor"
    assert set(lower_bounds.NOT_INSTALLED) == {"torch", "trl"}
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash .ci/lower_bounds.sh" in run


def test_the_private_pettingzoo_check_we_replace_is_still_there():
    api_test = importlib.import_module("pettingzoo.test.api_test")
    check = api_test._test_observation_space_compatibility
    assert list(inspect.signature(check).parameters) == ["expected", "seen", "recursed_keys"]
    assert re.search(r"\bdtype\b", inspect.getsource(check)), "PettingZoo changed the check: see docs/compatibility.md"
