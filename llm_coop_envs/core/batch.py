"""step_many: one step of many envs (e.g. a group's copies of one state), scored together.

A rollout steps G (or G^N) copies of one state, each with its own joint reply. Stepped one at a
time, every copy pays a round trip to the sandbox and waits idle while its program runs; here the
joint replies of all copies whose task scores batches (``evaluate_many(items, executor)``: the
coding and writing tasks) go to the task in one call. A coding task hands them to the sandbox as
one batch: each program still runs on its own, isolated, and the results equal one ``env.step``
each. Either task calls a batched reward function once for all of them
(:mod:`llm_coop_envs.core.reward_fns`). Other envs are stepped as they are (on ``executor`` when
one is given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from llm_coop_envs.core.env import CoopEnv

StepResult = tuple[dict, dict, dict, dict, dict]


def step_many(envs: Sequence[Any], actions: Sequence[Mapping[str, str]],
              executor: Executor | None = None) -> list[StepResult]:
    """``[env.step(a) for env, a in zip(envs, actions)]``, with the scoring batched where the task
    supports it. The envs must be distinct objects (copies of one state are fine). Invalid
    actions for any batched env raise before any env changes, as ``step`` would."""
    envs, actions = list(envs), list(actions)
    if len(envs) != len(actions):
        raise ValueError(f"step_many got {len(envs)} envs but {len(actions)} actions.")
    if len({id(env) for env in envs}) != len(envs):
        raise ValueError("step_many needs distinct env objects (copy.deepcopy an env to branch it).")
    batched = [i for i, env in enumerate(envs) if _batches(env)]
    others = [i for i, env in enumerate(envs) if not _batches(env)]
    for i in batched:
        envs[i]._check_step(actions[i])
    results: list[StepResult | None] = [None] * len(envs)
    for i, result in zip(others, _map(executor, lambda i: envs[i].step(actions[i]), others)):
        results[i] = result
    finishing = []
    for i in batched:
        if envs[i]._take_actions(actions[i]):
            finishing.append(i)
        else:
            results[i] = envs[i]._advance_phase(envs[i]._episode, envs[i]._truncated())
    evaluations = _evaluate(envs, finishing, executor)

    def finish(i: int) -> StepResult:  # feedback, history, observations: as in env.step
        return envs[i]._finish_turn(envs[i]._episode, envs[i]._truncated(), evaluations[i])

    for i, result in zip(finishing, _map(executor, finish, finishing)):
        results[i] = result
    return results  # type: ignore[return-value]


def _batches(env: Any) -> bool:
    return isinstance(env, CoopEnv) and callable(getattr(env.task, "evaluate_many", None))


def _evaluate(envs: list[CoopEnv], positions: list[int], executor: Executor | None) -> dict[int, Any]:
    """One evaluate_many call per task object (copies of an env share their task); the task may
    use ``executor`` for work it does one reply at a time."""
    by_task: dict[int, list[int]] = {}
    for i in positions:
        by_task.setdefault(id(envs[i].task), []).append(i)
    evaluations = {}
    for group in by_task.values():
        task = envs[group[0]].task
        for i, evaluation in zip(group, task.evaluate_many([envs[i]._joint_reply() for i in group], executor)):
            evaluations[i] = evaluation
    return evaluations


def _map(executor: Executor | None, function, items: list) -> list:
    if executor is None or len(items) < 2:
        return [function(item) for item in items]
    return list(executor.map(function, items))
