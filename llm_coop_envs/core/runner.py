"""Play whole episodes: reset, ask a policy for every acting agent's reply, step, until the episode ends.

The one episode loop of the project: the trainer's evaluation and the benchmarks' baselines both run
through it, and differ only in the policy they pass.

* :func:`run_episode` plays one env with a policy ``(agent, observation) -> reply``.
* :func:`run_episodes` plays many envs in lockstep with a batched policy: at each step the acting
  agents of every live episode are gathered into one list of :class:`Request`\\ s, the policy answers
  them in one call (one batched generation), and all envs are stepped together with
  :func:`~llm_coop_envs.core.env.step_many` (one sandbox batch for the coding envs).

A reply is a ``str`` or any object with a ``text`` attribute (a generated completion that also
carries token counts): the env gets the text, the transcript keeps the object. Who acts is read from
the env's public API only: the agents in ``env.agents`` whose ``infos[agent].get("active", True)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from llm_coop_envs.core.env import map_on, step_many


@dataclasses.dataclass(frozen=True)
class Request:
    """One acting agent of one live episode, waiting for its reply."""

    episode: int
    """Position of the episode in the envs given to :func:`run_episodes`."""
    agent: str
    observation: str
    info: Mapping[str, Any]
    """The agent's current ``infos`` entry (``task_id``, ``turn``, ...)."""


Policy = Callable[[str, str], Any]
"""``(agent, observation) -> reply`` for one episode."""
BatchPolicy = Callable[[Sequence[Request]], Sequence[Any]]
"""``requests -> one reply per request, in order`` for many episodes at once."""


@dataclasses.dataclass
class Step:
    """One env step: what the acting agents saw and replied, and what the env answered."""

    observations: dict[str, str]
    """The acting agents' observations (what the policy was shown)."""
    replies: dict[str, Any]
    """The acting agents' replies, as the policy returned them."""
    rewards: dict[str, float] = dataclasses.field(default_factory=dict)
    terminations: dict[str, bool] = dataclasses.field(default_factory=dict)
    truncations: dict[str, bool] = dataclasses.field(default_factory=dict)
    infos: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    @property
    def info(self) -> dict[str, Any]:
        """The first agent's ``infos`` entry: the turn's verdict (reward components, solved, details)."""
        return next(iter(self.infos.values()), {})

    @property
    def ends_turn(self) -> bool:
        """True when this step scored a joint reply (the sequential protocol's earlier steps do not)."""
        return "reward_components" in self.info

    @property
    def joint_reward(self) -> float:
        """The env's ``joint_reward`` when it reports one (per-agent reward modes), else the agents' mean."""
        return joint_reward(self.rewards, self.info)


@dataclasses.dataclass
class EpisodeResult:
    """A played episode: the reset's observations and infos, then every step."""

    task_id: str
    observations: dict[str, str]
    infos: dict[str, dict[str, Any]]
    steps: list[Step] = dataclasses.field(default_factory=list)
    error: str = ""
    """``"Type: message"`` when the env raised during a step and ``errors="record"`` ended the episode there
    (the failed step is kept, with no rewards or infos)."""

    @property
    def final(self) -> Step | None:
        """The last step (the final answer's verdict), or None when no step was taken."""
        return self.steps[-1] if self.steps else None


@dataclasses.dataclass(eq=False)  # compared by identity
class _Live:
    env: Any
    result: EpisodeResult
    observations: dict[str, str]
    infos: dict[str, dict[str, Any]]
    done: bool = False

    def acting(self) -> list[str]:
        return [a for a in self.env.agents if self.infos.get(a, {}).get("active", True)]


def run_episode(env: Any, policy: Policy, *, seed: int | None = None,
                options: Mapping[str, Any] | None = None, max_steps: int | None = None) -> EpisodeResult:
    """Reset ``env`` (``seed``, ``options`` as in ``env.reset``) and play it to the end with ``policy``."""

    def batch(requests: Sequence[Request]) -> list[Any]:
        return [policy(r.agent, r.observation) for r in requests]

    return run_episodes([env], batch, seeds=[seed], options=[options], max_steps=max_steps)[0]


def run_episodes(
    envs: Sequence[Any],
    policy: BatchPolicy,
    *,
    seeds: Sequence[int | None] | None = None,
    options: Sequence[Mapping[str, Any] | None] | None = None,
    max_steps: int | None = None,
    executor: Executor | None = None,
    errors: str = "raise",
) -> list[EpisodeResult]:
    """Reset every env (its own seed and options) and play them all to the end in lockstep.

    The envs must be distinct objects (``copy.deepcopy`` one env to play it several times); they are
    stepped in place. ``max_steps`` caps the steps of each episode (None: until it ends).
    ``errors="record"``: an env that raises in ``step`` ends its own episode (``EpisodeResult.error``)
    and the others go on; the envs are then stepped one by one (on ``executor``), since
    :func:`step_many` scores a batch in one call, where one failure would fail them all.
    """
    if errors not in ("raise", "record"):
        raise ValueError(f"errors must be 'raise' or 'record', got {errors!r}.")
    seeds = list(seeds) if seeds is not None else [None] * len(envs)
    options = list(options) if options is not None else [None] * len(envs)
    if not len(envs) == len(seeds) == len(options):
        raise ValueError(f"run_episodes got {len(envs)} envs, {len(seeds)} seeds and {len(options)} options.")
    episodes = [_start(env, seed, option) for env, seed, option in zip(envs, seeds, options)]
    live = [e for e in episodes if e.acting()]
    steps = 0
    while live and (max_steps is None or steps < max_steps):
        playing = {id(e) for e in live}
        requests = [Request(i, agent, e.observations[agent], e.infos.get(agent, {}))
                    for i, e in enumerate(episodes) if id(e) in playing for agent in e.acting()]
        replies = _ask(policy, requests)
        actions = {id(e): {} for e in live}
        for request, reply in zip(requests, replies):
            actions[id(episodes[request.episode])][request.agent] = reply
        _step(live, [actions[id(e)] for e in live], executor, errors)
        steps += 1
        live = [e for e in live if not e.done and e.acting()]
    return [e.result for e in episodes]


def _start(env: Any, seed: int | None, options: Mapping[str, Any] | None) -> _Live:
    observations, infos = env.reset(seed=seed, options=dict(options) if options else None)
    task_id = next((str(i["task_id"]) for i in infos.values() if "task_id" in i), "")
    result = EpisodeResult(task_id, dict(observations), {a: dict(i) for a, i in infos.items()})
    return _Live(env, result, dict(observations), dict(infos))


def _ask(policy: BatchPolicy, requests: list[Request]) -> list[Any]:
    replies = list(policy(requests))
    if len(replies) != len(requests):
        raise RuntimeError(f"The policy returned {len(replies)} replies for {len(requests)} requests.")
    return replies


def joint_reward(rewards: Mapping[str, float], info: Mapping[str, Any]) -> float:
    """A step's joint reward: ``info["joint_reward"]`` when the env reports it (per-agent reward modes),
    else the mean of the agents' rewards (each of them, under a joint reward)."""
    joint = info.get("joint_reward")
    if isinstance(joint, (int, float)) and not isinstance(joint, bool):
        return float(joint)
    return float(np.mean(list(rewards.values()))) if rewards else 0.0


def reply_text(reply: Any) -> str:
    """What the env gets from a reply: the string itself, or its ``text``."""
    return reply if isinstance(reply, str) else reply.text


def _step(live: list[_Live], actions: list[dict[str, Any]], executor: Executor | None, errors: str) -> None:
    texts = [{agent: reply_text(reply) for agent, reply in a.items()} for a in actions]
    steps = [Step({agent: e.observations[agent] for agent in a}, dict(a)) for e, a in zip(live, actions)]
    for episode, step in zip(live, steps):
        episode.result.steps.append(step)
    if errors == "raise":
        outcomes = step_many([e.env for e in live], texts, executor=executor)
    else:
        outcomes = map_on(executor, lambda pair: _step_one(*pair), list(zip(live, texts)))
    for episode, step, outcome in zip(live, steps, outcomes):
        if isinstance(outcome, BaseException):  # an env bug costs this episode, not the others
            episode.result.error, episode.done = f"{type(outcome).__name__}: {outcome}", True
            continue
        observations, rewards, terminations, truncations, infos = outcome
        step.rewards, step.terminations, step.truncations = dict(rewards), dict(terminations), dict(truncations)
        step.infos = {agent: dict(info) for agent, info in infos.items()}
        episode.observations, episode.infos = dict(observations), dict(infos)
        episode.done = not episode.env.agents or all(
            terminations.get(a, False) or truncations.get(a, False) for a in terminations)


def _step_one(episode: _Live, actions: dict[str, str]):
    try:
        return episode.env.step(actions)
    except Exception as error:
        return error
