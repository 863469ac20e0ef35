"""The environments the multi-turn tests run on: every registered id whose module exists, and the toy."""

from __future__ import annotations

import importlib.util
from typing import Any

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from tests.toy_task import SecretWordTask

TOY = "toy"


def _module_exists(entry_point: Any) -> bool:
    if not isinstance(entry_point, str):
        return True
    module = entry_point.partition(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def available_env_names() -> list[str]:
    """The toy env and each registered id whose entry point module is present (envs still being built
    are left out here and reported by ``missing_env_ids``; an env that exists but breaks fails loudly)."""
    ids = [i for i in llm_coop_envs.registered_ids() if _module_exists(llm_coop_envs.spec(i).entry_point)]
    return [TOY, *ids]


def missing_env_ids() -> list[str]:
    return [i for i in llm_coop_envs.registered_ids() if not _module_exists(llm_coop_envs.spec(i).entry_point)]


def build(name: str, **kwargs: Any) -> Any:
    """A fresh env: the toy task in CoopEnv, or ``llm_coop_envs.make(name, **kwargs)``."""
    if name == TOY:
        return CoopEnv(SecretWordTask(), **kwargs)
    return llm_coop_envs.make(name, **kwargs)


def distinct_replies(agents: list[str], turn: int) -> dict[str, str]:
    """Replies that solve nothing and that can be found verbatim in a later observation."""
    return {agent: f"def draft_{agent}_{turn}(x):\n    return x  # {agent} attempt {turn}\n" for agent in agents}
