"""Run many episodes of one method in lockstep, so each agent's generator sees one batch per step.

Episodes (problems × samples) advance together: at each step every live episode's active agents
are gathered per role, one generator call answers each role, then the env copies are stepped in a
thread pool (the sandbox runs tests in separate processes, so steps overlap).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.baselines.generator import Reply, ReplyGenerator
from benchmarks.baselines.methods import Method
from benchmarks.baselines.prompts import single_agent_prompt
from benchmarks.records import EpisodeRecord, test_counts

Team = Mapping[str, ReplyGenerator]


@dataclasses.dataclass
class _Live:
    """An episode in progress."""

    env: Any
    record: EpisodeRecord
    observations: dict[str, str]
    infos: dict[str, dict]


def run_method(
    env: Any,
    method: Method,
    team: Team,
    jobs: Sequence[tuple[str, int]],
    *,
    batch_size: int = 16,
    env_workers: int = 4,
    seed: int = 0,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> list[EpisodeRecord]:
    """Play ``(task_id, sample)`` jobs of ``method`` on copies of ``env`` (made with the method's options)."""
    records: list[EpisodeRecord] = []
    with ThreadPoolExecutor(max_workers=env_workers) as pool:
        for start in range(0, len(jobs), batch_size):
            chunk = jobs[start : start + batch_size]
            for record in _run_chunk(env, method, team, chunk, pool, seed):
                records.append(record)
                if on_done is not None:
                    on_done(record)
    return records


def _run_chunk(env, method: Method, team: Team, chunk, pool, seed: int) -> list[EpisodeRecord]:
    episodes = [_start(env, method, task_id, sample, seed) for task_id, sample in chunk]
    live = list(episodes)
    while live:
        actions, step_latency, step_tokens = _act(live, method, team, env.possible_agents)
        list(pool.map(_step, live, actions))
        for episode, latency, tokens in zip(live, step_latency, step_tokens):
            episode.record.latency_s += latency
            episode.record.critical_tokens += tokens
        live = [e for e in live if e.env.agents]
    return [e.record for e in episodes]


def _start(env, method: Method, task_id: str, sample: int, seed: int) -> _Live:
    branch = copy.deepcopy(env)
    observations, infos = branch.reset(seed=seed + sample, options={"task_id": task_id})
    record = EpisodeRecord(method=method.name, task_id=str(infos[branch.possible_agents[0]]["task_id"]), sample=sample)
    record.replies = dict.fromkeys(branch.possible_agents, "")
    if method.solo:
        last = branch.possible_agents[-1]
        index = _index_of(branch.task, record.task_id)
        observations[last] = single_agent_prompt(branch.task, index, observations[last])
    return _Live(branch, record, observations, infos)


def _index_of(task: Any, task_id: str) -> int:
    return next(i for i in range(len(task)) if task.task_id(i) == task_id)


def _active(episode: _Live) -> list[str]:
    return [a for a in episode.env.agents if episode.infos.get(a, {}).get("active", True)]


def _act(live: list[_Live], method: Method, team: Team, roles: Sequence[str]):
    """One generator call per role over all live episodes; returns actions and critical-path costs."""
    actions: list[dict[str, str]] = [{} for _ in live]
    latency = [0.0] * len(live)
    tokens = [0] * len(live)
    for role in roles:
        waiting = [i for i, e in enumerate(live) if role in _active(e)]
        if not waiting:
            continue
        speaks = not method.solo or role == roles[-1]
        replies, seconds = _generate(team, role, [live[i].observations[role] for i in waiting]) if speaks else ([], 0.0)
        for position, i in enumerate(waiting):
            reply = replies[position] if speaks else Reply("", 0)
            actions[i][role] = reply.text
            live[i].record.replies[role] = reply.text
            live[i].record.tokens += reply.tokens
            tokens[i] = max(tokens[i], reply.tokens)
            latency[i] = max(latency[i], seconds)
    return actions, latency, tokens


def _generate(team: Team, role: str, prompts: list[str]) -> tuple[list[Reply], float]:
    try:
        generator = team[role]
    except KeyError:
        raise ValueError(f"No generator for role {role!r}; the team has {sorted(team)}.") from None
    started = time.perf_counter()
    replies = list(generator(prompts, role))
    seconds = time.perf_counter() - started
    if len(replies) != len(prompts):
        raise RuntimeError(f"The generator for {role!r} returned {len(replies)} replies for {len(prompts)} prompts.")
    return [r if isinstance(r, Reply) else Reply(str(r), 0) for r in replies], seconds


def _step(episode: _Live, actions: dict[str, str]) -> None:
    record = episode.record
    try:
        observations, rewards, _, _, infos = episode.env.step(actions)
    except Exception as error:  # an env bug costs this episode, not the whole evaluation
        record.error = f"{type(error).__name__}: {error}"
        episode.env.agents = []
        return
    episode.observations, episode.infos = observations, infos
    acted = next(iter(actions))
    record.episode_return += float(rewards.get(acted, 0.0))
    info = infos.get(acted, {})
    if "reward_components" in info:  # a turn ended: this is the joint reply's verdict so far
        _read_verdict(record, float(rewards.get(acted, 0.0)), info)


def _read_verdict(record: EpisodeRecord, reward: float, info: Mapping[str, Any]) -> None:
    record.turns += 1
    record.reward = reward
    record.components = dict(info.get("reward_components", {}))
    record.solved = bool(info.get("solved", False))
    details = info.get("details", {}) or {}
    counts = test_counts(details)
    record.code = dict(details.get("code", {}))
    record.tests_passed, record.tests_total = counts if counts else (None, None)
