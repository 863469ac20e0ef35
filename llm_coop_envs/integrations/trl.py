"""Any registered env with one agent as Hugging Face TRL ``GRPOTrainer`` data and reward function.

TRL calls a reward function as ``f(prompts=..., completions=..., **columns)`` and expects one float
per completion; the dataset's extra columns arrive as keyword lists. :func:`env_prompts` builds the
dataset rows (``prompt`` and ``task_id``) and :class:`EnvReward` scores each completion by opening
that task in a copy of the env (``reset(options={"task_id": ...})``) and stepping it with the
completion as the agent's reply (all completions of one call together, through ``step_many``, so
a coding env checks them as one sandbox batch): the reward is the env's first-turn reward. TRL
itself is not imported here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from llm_coop_envs.core.env import step_many
from llm_coop_envs.registration import make

TASK_ID_COLUMN = "task_id"


def _one_agent_env(env_id: str, env_kwargs: Mapping[str, Any]) -> Any:
    env = make(env_id, **env_kwargs)
    if len(env.possible_agents) != 1:
        raise ValueError(
            f"{env_id} has the agents {env.possible_agents}; TRL's GRPOTrainer trains one model on one reply per "
            "prompt, so it needs a one-agent team (the coding envs take team='single')."
        )
    return env


def env_prompts(env_id: str, *, conversational: bool = False, **env_kwargs: Any) -> list[dict[str, Any]]:
    """One row per problem of the env's split: ``{"prompt": observation, "task_id": id}``.

    ``conversational=True`` gives the prompt as ``[{"role": "user", "content": observation}]``, so that
    TRL applies the model's chat template."""
    env = _one_agent_env(env_id, env_kwargs)
    (agent,) = env.possible_agents
    rows = []
    for index in range(len(env.task)):
        observations, infos = env.reset(options={"index": index})
        text = observations[agent]
        prompt = [{"role": "user", "content": text}] if conversational else text
        rows.append({"prompt": prompt, TASK_ID_COLUMN: infos[agent]["task_id"]})
    return rows


class EnvReward:
    """A TRL reward function backed by the env ``env_id`` (made with ``env_kwargs``, one agent)."""

    def __init__(self, env_id: str, *, task_id_column: str = TASK_ID_COLUMN, **env_kwargs: Any) -> None:
        self._env = _one_agent_env(env_id, env_kwargs)
        (self.agent,) = self._env.possible_agents
        self.task_id_column = task_id_column
        self.__name__ = env_id.replace("-", "_")  # TRL logs each reward function under its __name__

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
        task_ids = kwargs.get(self.task_id_column)
        if task_ids is None:
            columns = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric"))
            raise KeyError(
                f"{self.__name__} needs the dataset column {self.task_id_column!r} (the task id of each prompt, as "
                f"env_prompts() writes it); the columns given are {columns}."
            )
        if len(task_ids) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(task_ids)} task ids.")
        # One step per completion, all of them at once: a coding env runs them as one sandbox batch.
        envs = [self._start(task_id) for task_id in task_ids]
        results = step_many(envs, [{self.agent: _reply_text(c)} for c in completions])
        return [float(rewards[self.agent]) for _, rewards, *_ in results]

    def score(self, task_id: str, completion: Any) -> float:
        """The env's reward for ``completion`` as the agent's reply to ``task_id``."""
        _, rewards, *_ = self._start(task_id).step({self.agent: _reply_text(completion)})
        return float(rewards[self.agent])

    def _start(self, task_id: str) -> Any:
        env = copy.deepcopy(self._env)
        env.reset(options={"task_id": task_id})
        return env


def _reply_text(completion: Any) -> str:
    """A completion's text: a string as is; a conversational one is a list of messages (the last one's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return str(completion)
