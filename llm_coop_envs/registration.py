"""The environment registry: ids of the form ``name-vN``, lazy entry points, helpful errors.

Every environment is created through :func:`make`. An old version of a registered name that is no
longer registered (``mbpp-v0`` once ``mbpp-v1`` is the lowest left) raises :class:`RemovedEnvError`
naming the current id, as Gymnasium's ``DeprecatedEnv`` does. A registered :class:`EnvSpec` is frozen; the
keyword arguments an environment was finally built with are recorded on ``env.spec`` so that a run
can be reproduced from its log.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

ENV_ID_RE = re.compile(r"^(?P<name>[A-Za-z0-9][\w.]*)-v(?P<version>\d+)$")
NAMESPACE = "llm_coop_envs"
"""The documented namespace of the ids in PettingZoo's and Gymnasium's registries: ``llm_coop_envs/<id>``."""
ALIAS_NAMESPACE = "llm_coop"
"""An older name of the same namespace, kept working in both registries (``llm_coop/<id>``)."""
PETTINGZOO_NAMESPACE = GYMNASIUM_NAMESPACE = NAMESPACE
SINGLE_AGENT_ENTRY_POINT = "llm_coop_envs.wrappers.single_agent:make_single_agent"


class RegistrationError(ValueError):
    """A malformed id, a duplicate registration or an entry point that cannot be loaded."""


class UnknownEnvError(KeyError):
    """``make`` or ``spec`` was given an id that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; show it as plain text
        return str(self.args[0])


class RemovedEnvError(UnknownEnvError):
    """``make`` or ``spec`` was given an old version of a registered env that is no longer registered;
    the message names the current id."""


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """Everything needed to build an environment again: id, entry point and keyword arguments."""

    id: str
    entry_point: str | Callable[..., Any]
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        match = ENV_ID_RE.match(self.id) if isinstance(self.id, str) else None
        if match is None:
            raise RegistrationError(
                f"Malformed environment id {self.id!r}: ids look like 'name-vN', e.g. 'coop_humaneval-v0'."
            )
        if isinstance(self.entry_point, str) and ":" not in self.entry_point:
            raise RegistrationError(
                f"Entry point {self.entry_point!r} for {self.id!r} must be 'package.module:attribute'."
            )
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))

    @property
    def name(self) -> str:
        return ENV_ID_RE.match(self.id)["name"]

    @property
    def version(self) -> int:
        return int(ENV_ID_RE.match(self.id)["version"])

    def with_kwargs(self, kwargs: Mapping[str, Any]) -> EnvSpec:
        """The same spec with the keyword arguments an instance was actually built with."""
        return dataclasses.replace(self, kwargs=kwargs)

    def make(self, **kwargs: Any) -> Any:
        """Build the env again with this spec's keyword arguments (``kwargs`` override them): on
        ``env.spec`` those are the ones the env was made with, so this rebuilds the same env."""
        return make(self.id, **{**self.kwargs, **kwargs})

    def accepts(self, keyword: str) -> bool:
        """Whether the entry point takes ``keyword`` (by name or through ``**kwargs``), read from its
        signature without building an env; True when the signature cannot be read."""
        try:
            parameters = inspect.signature(_load(self.entry_point)).parameters.values()
        except (TypeError, ValueError):
            return True
        return any((p.name == keyword and p.kind is not p.POSITIONAL_ONLY) or p.kind is p.VAR_KEYWORD
                   for p in parameters)


_REGISTRY: dict[str, EnvSpec] = {}


def register(id: str, entry_point: str | Callable[..., Any], **default_kwargs: Any) -> EnvSpec:
    """Register an environment under ``id`` (``name-vN``).

    ``entry_point`` is a ``"module:attribute"`` string (imported only when the env is made) or a
    callable; it is called with the merged keyword arguments and must return a PettingZoo
    ``ParallelEnv``. The env is also registered in PettingZoo's parallel and AEC registries as
    ``llm_coop/<id>``, and with Gymnasium as ``llm_coop_envs/<id>``: one agent's view of it
    (:class:`~llm_coop_envs.wrappers.SingleAgentEnv`), the other roles silent unless told.
    """
    if id in _REGISTRY:
        raise RegistrationError(f"{id!r} is already registered; bump the version (e.g. '-v1') instead.")
    env_spec = EnvSpec(id=id, entry_point=entry_point, kwargs=default_kwargs)
    _REGISTRY[id] = env_spec
    _register_with_pettingzoo(id)
    _register_with_gymnasium(id)
    return env_spec


def spec(id: str) -> EnvSpec:
    """The registered :class:`EnvSpec` of ``id``; an unknown id raises an error naming close matches."""
    if not isinstance(id, str):
        raise TypeError(f"Environment ids are strings like 'coop_humaneval-v0', got {type(id).__name__}.")
    try:
        return _REGISTRY[id]
    except KeyError:
        current = _current_id_above(id)
        if current is not None:
            raise RemovedEnvError(
                f"{id} is no longer registered: use {current}, the current version (the version history "
                f"on its env page says what changed)."
            ) from None
        raise UnknownEnvError(_unknown_id_message(id)) from None


def make(id: str, **kwargs: Any) -> Any:
    """Create the environment registered as ``id``; ``kwargs`` override the registered defaults."""
    env_spec = spec(id)
    final_kwargs = {**env_spec.kwargs, **kwargs}
    try:
        env = _load(env_spec.entry_point)(**final_kwargs)
    except TypeError as error:
        unknown = _unknown_keyword(error, final_kwargs)
        if unknown is None:
            raise
        raise TypeError(_unknown_keyword_message(id, unknown, error)) from error
    env.spec = env_spec.with_kwargs(final_kwargs)
    return env


_UNEXPECTED_KEYWORD = re.compile(r"unexpected keyword argument '(?P<name>\w+)'")


def _unknown_keyword(error: TypeError, kwargs: Mapping[str, Any]) -> str | None:
    """The keyword of ``kwargs`` that ``error`` says no function along the way takes (None: another error)."""
    match = _UNEXPECTED_KEYWORD.search(str(error))
    return match["name"] if match and match["name"] in kwargs else None


def _unknown_keyword_message(id: str, name: str, error: TypeError) -> str:
    """One line naming the keyword ``id`` does not take and the nearest one it does, as ids get."""
    close = difflib.get_close_matches(name, _known_keywords(error), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else "; its env page lists the arguments it takes"
    return f"{id} takes no argument {name!r}{hint}."


def _known_keywords(error: TypeError) -> list[str]:
    """The keywords of every function the arguments went through before one refused them (the entry
    point, a factory such as ``coding_env``: read from the traceback's frames), and ``CoopEnv``'s,
    to which every bundled env hands the episode settings such as ``num_turns``."""
    from llm_coop_envs.core.env import CoopEnv

    names = [name for name in inspect.signature(CoopEnv).parameters if name != "task"]
    frame = error.__traceback__.tb_next if error.__traceback__ else None  # skip make() itself
    while frame is not None:
        code = frame.tb_frame.f_code
        names += [n for n in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] if n not in ("self", "cls")]
        frame = frame.tb_next
    return names


def make_aec(id: str, **kwargs: Any) -> Any:
    """The env registered as ``id`` with PettingZoo's AEC API (agents act one at a time), through
    ``pettingzoo.utils.parallel_to_aec``; also ``pettingzoo.make("aec", "llm_coop/<id>")``."""
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(make(id, **kwargs))


def registered_ids() -> list[str]:
    """All registered ids, sorted."""
    return sorted(_REGISTRY)


def _current_id_above(id: str) -> str | None:
    """The highest registered version of ``id``'s name when that is above ``id``'s version (``id`` is
    then an old version that was removed), else None."""
    match = ENV_ID_RE.match(id)
    if match is None:
        return None
    versions = [s.version for s in _REGISTRY.values() if s.name == match["name"]]
    newest = max(versions, default=-1)
    return f"{match['name']}-v{newest}" if newest > int(match["version"]) else None


def _unknown_id_message(id: str) -> str:
    known = registered_ids()
    same_name = [k for k in known if k.rsplit("-v", 1)[0] == id.rsplit("-v", 1)[0]]
    close = same_name or difflib.get_close_matches(id, known, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"No environment registered as {id!r}.{hint} Registered: {', '.join(known) or 'none'}."


@functools.lru_cache(maxsize=None)
def _load_string_entry_point(entry_point: str) -> Callable[..., Any]:
    module_name, _, attribute = entry_point.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute)
    except (ImportError, AttributeError) as error:
        raise RegistrationError(f"Cannot load entry point {entry_point!r}: {error}") from error


def _load(entry_point: str | Callable[..., Any]) -> Callable[..., Any]:
    return _load_string_entry_point(entry_point) if isinstance(entry_point, str) else entry_point


def _register_with_pettingzoo(id: str) -> None:
    """Mirror the id into PettingZoo's registries (present from pettingzoo 1.27) when they exist.

    PettingZoo has no plugin discovery: these entries exist only once ``llm_coop_envs`` is imported."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, parallel_registry, register as pz_register
    except ImportError:
        return
    for namespace in (NAMESPACE, ALIAS_NAMESPACE):
        pz_id = f"{namespace}/{id}"
        if pz_id not in parallel_registry:
            pz_register("parallel", pz_id, entry_point=functools.partial(make, id))
        if pz_id not in aec_registry:
            pz_register("aec", pz_id, entry_point=functools.partial(make_aec, id))


def gymnasium_id(id: str) -> str:
    """The Gymnasium id of the registered env ``id``: ``llm_coop_envs/<id>``."""
    return f"{GYMNASIUM_NAMESPACE}/{id}"


def _register_with_gymnasium(id: str) -> None:
    """Register ``llm_coop_envs/<id>`` with Gymnasium: ``gymnasium.make`` builds it through
    :func:`~llm_coop_envs.wrappers.single_agent.make_single_agent` (``agent=``, ``partners=``, and
    every keyword ``make`` takes, ``render_mode`` included). Like PettingZoo, Gymnasium finds the id
    once ``llm_coop_envs`` is imported, or when it is named as ``llm_coop_envs:llm_coop_envs/<id>``."""
    import gymnasium

    for gym_id in (gymnasium_id(id), f"{ALIAS_NAMESPACE}/{id}"):
        if gym_id not in gymnasium.registry:
            gymnasium.register(gym_id, entry_point=SINGLE_AGENT_ENTRY_POINT, kwargs={"env_id": id})
