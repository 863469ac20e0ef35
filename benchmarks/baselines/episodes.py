"""Run many episodes of one method in lockstep, so each agent's generator sees one batch per step.

The episodes are played by the env package's runner (:func:`llm_coop_envs.core.runner.run_episodes`):
episodes (problems × samples) advance together, and at each step the runner asks one batched policy
for every live episode's acting agents. The policy here is the team (:func:`team_policy`): it
answers each role's requests with one call to that role's generator. A method that lets only the
last role speak (``solo``) is the team behind :func:`solo_policy`. The env copies are stepped in a
thread pool (the sandbox runs tests in separate processes, so steps overlap), and an env that raises
costs its own episode only.
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
from llm_coop_envs.coding.dependence import solved_needing_helper
from llm_coop_envs.core.runner import BatchPolicy, EpisodeResult, Request, run_episodes

Team = Mapping[str, ReplyGenerator]


@dataclasses.dataclass(frozen=True)
class ServedReply:
    """A generated reply and the seconds of the generator call that served it (its batch's wall time)."""

    text: str
    tokens: int
    seconds: float


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
    policy = team_policy(team, env.possible_agents)
    if method.solo:
        policy = solo_policy(policy, env.task, env.possible_agents[-1])
    records: list[EpisodeRecord] = []
    with ThreadPoolExecutor(max_workers=env_workers) as pool:
        for start in range(0, len(jobs), batch_size):
            chunk = jobs[start : start + batch_size]
            episodes = run_episodes(
                [copy.deepcopy(env) for _ in chunk], policy, seeds=[seed + sample for _, sample in chunk],
                options=[{"task_id": task_id} for task_id, _ in chunk], executor=pool, errors="record",
            )
            for (_, sample), episode in zip(chunk, episodes):
                record = episode_record(method.name, sample, episode, env.possible_agents)
                records.append(record)
                if on_done is not None:
                    on_done(record)
    return records


def team_policy(team: Team, roles: Sequence[str]) -> BatchPolicy:
    """A batched policy over a team: one call to each role's generator per step, roles in order."""
    def answer(requests: Sequence[Request]) -> list[ServedReply]:
        replies: list[ServedReply | None] = [None] * len(requests)
        for role in roles:
            waiting = [i for i, r in enumerate(requests) if r.agent == role]
            if waiting:
                served, seconds = _generate(team, role, [requests[i].observation for i in waiting])
                for i, reply in zip(waiting, served):
                    replies[i] = ServedReply(reply.text, reply.tokens, seconds)
        return replies

    return answer


def solo_policy(team: BatchPolicy, task: Any, speaker: str) -> BatchPolicy:
    """Only ``speaker`` generates, shown the task's single-agent prompt on the first turn; the others
    reply '' without a generator call."""
    def answer(requests: Sequence[Request]) -> list[ServedReply]:
        speaking = [_single_prompt(r, task) for r in requests if r.agent == speaker]
        served = iter(team(speaking) if speaking else [])
        return [next(served) if r.agent == speaker else ServedReply("", 0, 0.0) for r in requests]

    return answer


def _single_prompt(request: Request, task: Any) -> Request:
    if request.info.get("turn", 1) != 1:
        return request
    index = _index_of(task, str(request.info["task_id"]))
    return dataclasses.replace(request, observation=single_agent_prompt(task, index, request.observation))


def _index_of(task: Any, task_id: str) -> int:
    return next(i for i in range(len(task)) if task.task_id(i) == task_id)


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


def episode_record(method: str, sample: int, episode: EpisodeResult, roles: Sequence[str]) -> EpisodeRecord:
    """The results files' record of a played episode: last replies, costs, and the last verdict."""
    record = EpisodeRecord(method=method, task_id=episode.task_id, sample=sample, error=episode.error)
    record.replies = dict.fromkeys(roles, "")
    for step in episode.steps:
        replies = step.replies.values()
        record.replies |= {agent: reply.text for agent, reply in step.replies.items()}
        record.tokens += sum(r.tokens for r in replies)
        record.critical_tokens += max((r.tokens for r in replies), default=0)
        record.latency_s += max((r.seconds for r in replies), default=0.0)
        acted = next(iter(step.replies), None)
        reward = float(step.rewards.get(acted, 0.0))
        record.episode_return += reward
        info = step.infos.get(acted, {})
        if "reward_components" in info:  # a turn ended: this is the joint reply's verdict so far
            _read_verdict(record, reward, info)
    return record


def _read_verdict(record: EpisodeRecord, reward: float, info: Mapping[str, Any]) -> None:
    record.turns += 1
    record.reward = reward
    record.components = dict(info.get("reward_components", {}))
    record.solved = bool(info.get("solved", False))
    record.helper_needed = solved_needing_helper(info)
    details = info.get("details", {}) or {}
    counts = test_counts(details)
    record.code = dict(details.get("code", {}))
    record.tests_passed, record.tests_total = counts if counts else (None, None)
