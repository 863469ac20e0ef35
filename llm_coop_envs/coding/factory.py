"""Build a coding env from a dataset's rows: the split, the task and the CoopEnv around it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from llm_coop_envs.coding.task import CodingTask
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import select_split
from llm_coop_envs.sandbox import SandboxConfig

DEFAULT_SPLIT = "train"


def coding_env(
    dataset: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    split: str = DEFAULT_SPLIT,
    data_path: str | os.PathLike | None = None,
    reward: Any = "levels",
    sandbox: SandboxConfig | None = None,
    team: str = "pair",
    reward_mode: str = "joint",
    name: str,
    **env_kwargs: Any,
) -> CoopEnv:
    """A CoopEnv over ``split`` of ``rows``; ``env_kwargs`` go to :class:`CoopEnv` unchanged."""
    chosen = select_split(rows, dataset, split, custom_data=data_path is not None)
    task = CodingTask(
        chosen, reward=reward, sandbox=sandbox, protocol=env_kwargs.get("protocol", "parallel"),
        team=team, reward_mode=reward_mode,
    )
    env = CoopEnv(task, **env_kwargs)
    env.metadata = {**CoopEnv.metadata, "name": name}
    return env
