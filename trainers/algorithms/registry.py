"""Finding an algorithm by name: the bundled ones, those you register, installed plug-ins, ``module:Class``.

``TrainConfig.algo`` (and ``--algo``) is looked up in this order:

1. ``"package.module:Class"``: imported directly, no registration needed;
2. a name registered in this process with :func:`register_algorithm`;
3. a bundled algorithm (:data:`BUNDLED`);
4. a name another installed package declares in the entry-point group :data:`ENTRY_POINT_GROUP`::

       # that package's pyproject.toml
       [project.entry-points."llm_coop_envs.algorithms"]
       my_algo = "my_package.my_module:MyAlgorithm"

A name is unique across all of them: registering a taken name (or two packages declaring the same
one) is an error. Bundled and installed algorithms are named as ``module:Class`` strings and imported
only when used, so this module imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

ENTRY_POINT_GROUP = "llm_coop_envs.algorithms"

BUNDLED: Mapping[str, str] = {
    "magrpo": "trainers.algorithms.magrpo:MAGRPO",
    "grpo": "trainers.algorithms.grpo:GRPO",
    "mareinforce": "trainers.algorithms.mareinforce:MAREINFORCE",
    "marloo": "trainers.algorithms.marloo:MARLOO",
    "maremax": "trainers.algorithms.maremax:MAReMax",
    "mappo": "trainers.algorithms.mappo:MAPPO",
    "iac": "trainers.algorithms.iac:IAC",
    "maac": "trainers.algorithms.maac:MAAC",
}

_REGISTERED: dict[str, Callable[..., Any]] = {}
_INSTALLED: dict[str, str] | None = None  # filled from the entry points on first lookup


class AlgorithmNameError(ValueError):
    """A name that is taken twice."""


def register_algorithm(name: str, factory: Callable[..., Any] | None = None, *, replace: bool = False):
    """Register ``factory`` (a class or a function returning an algorithm) under ``name``.

    Usable as a decorator, ``@register_algorithm("mine")``. A name that is already taken (bundled,
    installed or registered before) is an error unless ``replace=True`` (e.g. when a notebook cell
    defining the algorithm runs again)."""

    def add(target: Callable[..., Any]) -> Callable[..., Any]:
        if not isinstance(name, str) or not name or ":" in name:
            raise ValueError(f"An algorithm name must be a non-empty string without ':', got {name!r}.")
        if not replace and name in _known():
            raise AlgorithmNameError(
                f"An algorithm named {name!r} is already registered ({_where(name)}); pick another name "
                "or pass replace=True."
            )
        _REGISTERED[name] = target
        return target

    return add(factory) if factory is not None else add


def get_algorithm(name: str, **options: Any) -> Any:
    """Build the algorithm ``name`` (a registered name or ``"module:Class"``) with ``options``
    (``TrainConfig.algo_kwargs``) and check that it has the two methods the trainer calls."""
    algorithm = algorithm_factory(name)(**options)
    for method in ("advantages", "loss"):
        if not callable(getattr(algorithm, method, None)):
            raise TypeError(f"Algorithm {name!r} has no {method}() method; see trainers.algorithms.base.Algorithm.")
    return algorithm


def algorithm_factory(name: str) -> Callable[..., Any]:
    """The class (or function) that ``name`` stands for, imported if needed."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"algo must be a name or 'package.module:Class', got {name!r}.")
    if ":" in name:
        return _import(name, name)
    if name in _REGISTERED:
        return _REGISTERED[name]
    spec = BUNDLED.get(name) or _installed().get(name)
    if spec is None:
        raise KeyError(
            f"No algorithm named {name!r}; registered: {registered_algorithms()}. A class in your own "
            "module can be named as 'package.module:Class'."
        )
    return _import(spec, name)


def registered_algorithms() -> list[str]:
    """Every name :func:`get_algorithm` knows (``module:Class`` strings aside)."""
    return sorted(_known())


def _known() -> dict[str, str]:
    names = {name: "bundled" for name in BUNDLED}
    names.update({name: f"entry point {spec}" for name, spec in _installed().items()})
    names.update({name: "registered in this process" for name in _REGISTERED})
    return names


def _where(name: str) -> str:
    return _known().get(name, "unknown")


def _installed() -> dict[str, str]:
    """Names declared by installed packages in :data:`ENTRY_POINT_GROUP` (read once)."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = read_entry_points(_entry_points())
    return _INSTALLED


def read_entry_points(entries: Any) -> dict[str, str]:
    """``{name: "module:Class"}`` from entry points; a name declared twice, or one that a bundled
    algorithm has, is an error naming both declarations."""
    found: dict[str, str] = {}
    for entry in entries:
        if entry.name in BUNDLED:
            raise AlgorithmNameError(
                f"The entry point {entry.name} = {entry.value!r} ({ENTRY_POINT_GROUP}) takes the name of a "
                "bundled algorithm; rename it."
            )
        if entry.name in found and found[entry.name] != entry.value:
            raise AlgorithmNameError(
                f"Two installed packages declare the algorithm {entry.name!r} ({ENTRY_POINT_GROUP}): "
                f"{found[entry.name]!r} and {entry.value!r}; uninstall or rename one."
            )
        found[entry.name] = entry.value
    return found


def _entry_points() -> Any:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _import(spec: str, name: str) -> Callable[..., Any]:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"algo={name!r}: write a class in your own module as 'package.module:Class'.")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        hint = " (is its package installed, or its folder on PYTHONPATH?)" if isinstance(error, ModuleNotFoundError) else ""
        raise ImportError(f"Cannot load the algorithm {name!r} from {spec!r}: {error}{hint}") from error
    if not callable(target):
        raise TypeError(f"The algorithm {name!r} ({spec!r}) is not a class or a function.")
    return target
