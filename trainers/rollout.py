"""Groups and trees of joint rollouts from any PettingZoo env, touched only through its public API.

A *state* is an env after ``reset`` (or after some steps). From a state, every acting agent samples G
replies; the replies are combined into joint samples:

* ``aligned``: the g-th replies of all agents together → G joint samples;
* ``cross``: every combination → G^N joint samples.

Each joint sample is stepped on its own ``copy.deepcopy`` of the env (all copies at once through
``llm_coop_envs.step_many``: one sandbox batch for coding envs, a thread pool for the others) and,
if the episode goes on, becomes the root of its own next turn: the rollout is a tree. The return of a
joint sample is its reward plus ``gamma`` times the mean return of its children; the siblings at one
node form a group (turn-wise grouping). A node whose samples' mean reward reaches ``early_stop_reward``
is not expanded further.

A solved state is absorbing: a joint sample that solves the task and ends before the env's last turn
(``env.num_turns``) keeps paying its reward for every turn it skipped, discounted as if the episode
had continued. Without this, ending early forfeits the later turns' rewards, and a sample solved at
turn 1 (R = r) would score below a near miss fixed at turn 2 (R = r' + γ·r). A sample cut by early
stopping is treated the same way (solved or not): its branch is taken to stay where it was cut, so
the return is a sum of per-turn rewards over every turn of the episode, and a branch that earns at
least as much at every counted turn (a cut branch counting its last reward for the turns it skips)
never gets a lower return, whatever the threshold. What this cannot see: a cut branch that would
have improved later is valued at its reward at the cut; with a threshold at the maximum reward (the
presets') nothing can improve.

All acting agents at a node are those in ``env.agents`` whose ``infos[agent].get("active", True)``: in
a sequential protocol only one agent acts per step, and the tree branches at each step.

Every agent's own reward and ``infos`` are kept (``JointSample.agent_rewards``, ``JointSample.infos``)
and discounted up the tree like the joint return (``JointSample.agent_returns``, ``Group.agent_returns``).
The joint reward of a sample is ``infos[agent]["joint_reward"]`` when the env reports it (per-agent
reward modes do), else the mean of the agents' rewards (equal to each of them under a joint reward).

An algorithm whose baseline is the greedy joint reply (ReMax) gets it through ``greedy_sampler``: each
expanded node then also samples one greedy reply per acting agent, steps it on its own env copy in the
same parallel batch as the group, and keeps it as ``Node.greedy`` / ``Group.greedy`` (never expanded
into a group, never trained on). In the sequential protocol, where a turn pays only with its last
agent's step, the greedy reply of an earlier agent is continued greedily (the next agents' greedy
replies, one batched call per level) to the end of its turn; its return then holds the turn's reward.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from llm_coop_envs import step_many
from llm_coop_envs.core.runner import joint_reward
from trainers.generation.base import Completion


@dataclasses.dataclass
class JointSample:
    """One joint action at a node and what the env answered."""

    replies: dict[str, Completion]
    observations: dict[str, str]
    reward: float = 0.0
    components: dict[str, float] = dataclasses.field(default_factory=dict)
    solved: bool = False
    done: bool = False
    child: Node | None = None
    return_: float = 0.0
    """Filled by :func:`compute_returns`."""
    skipped_turns: int = 0
    """Turns the episode would still have had if it had not ended solved (paid by the absorbing rule)."""
    levels_per_turn: int = 1
    """Tree levels one turn takes (1 when all agents act at once; one per agent when they take turns)."""
    tests_passed: float | None = None
    """Share of the problem's tests that passed (``infos`` ``details`` ``passed``/``total``), if known."""
    agent_rewards: dict[str, float] = dataclasses.field(default_factory=dict)
    """Each agent's own reward from the env (all equal under a joint reward)."""
    agent_returns: dict[str, float] = dataclasses.field(default_factory=dict)
    """Each agent's own return (filled by :func:`compute_returns`)."""
    infos: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """Every agent's ``infos`` entry, as the env returned it."""


@dataclasses.dataclass
class Node:
    """A state of one episode: the env (not yet stepped from here) and who acts."""

    env: Any
    observations: dict[str, str]
    acting: tuple[str, ...]
    task_id: str
    depth: int = 0
    samples: list[JointSample] = dataclasses.field(default_factory=list)
    horizon: int | None = None
    """The episode's number of turns (``env.num_turns``), if the env says."""
    levels_per_turn: int = 1
    greedy: JointSample | None = None
    """The greedy joint reply from this state, when the rollout was asked for one (``greedy_sampler``)."""


@dataclasses.dataclass(frozen=True)
class Group:
    """The siblings at one node: what an algorithm turns into advantages."""

    returns: np.ndarray
    """Shape [S]: the return of each joint sample."""
    rewards: np.ndarray
    """Shape [S]: the immediate reward of each joint sample."""
    agents: tuple[str, ...]
    """The acting agents (every sample has one reply per agent)."""
    depth: int
    """0 for the first step of an episode, 1 for the next, ..."""
    samples: tuple[JointSample, ...] = ()
    agent_returns: np.ndarray | None = None
    """Shape [S, N]: each acting agent's own return (column order: ``agents``); ``None`` when not built
    by :func:`sibling_groups`. Equal to ``returns`` in every column under a joint reward."""
    greedy: JointSample | None = None
    """The node's greedy joint reply (with its ``return_`` and ``agent_returns``), if one was sampled."""

    def returns_per_agent(self) -> np.ndarray:
        """Shape [S, N]: ``agent_returns``, or ``returns`` repeated for every agent when there are none."""
        if self.agent_returns is not None:
            return np.asarray(self.agent_returns, dtype=np.float64)
        return np.repeat(np.asarray(self.returns, dtype=np.float64)[:, None], len(self.agents), axis=1)


# A sampler maps [(agent, observation)] to G completions for each request.
Sampler = Callable[[Sequence[tuple[str, str]], int], list[list[Completion]]]


# ---------------------------------------------------------------------------- pure functions
def joint_indices(group_size: int, num_agents: int, mode: str) -> list[tuple[int, ...]]:
    """Which reply of each agent goes into each joint sample.

    >>> joint_indices(2, 2, "aligned")
    [(0, 0), (1, 1)]
    >>> joint_indices(2, 2, "cross")
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    if mode == "aligned":
        return [(g,) * num_agents for g in range(group_size)]
    if mode == "cross":
        return list(itertools.product(range(group_size), repeat=num_agents))
    raise ValueError(f"joint_mode must be 'aligned' or 'cross', got {mode!r}.")


def compute_returns(node: Node, gamma: float) -> float:
    """Fill ``return_`` bottom-up and give the node's value (mean return of its samples).

    Return of a joint sample: R = r + gamma * mean(R of the child node's samples); a leaf's R = r, plus,
    for a leaf that ended solved with k turns to spare, r · Σ_{j=1..k} gamma^(j·L) (L tree levels per
    turn): the solved state is absorbing. This is the tree form of MAGRPO's discounted joint return
    (Liu et al., 2025, arXiv:2508.04652).
    """
    for sample in node.samples:
        if sample.child and sample.child.samples:
            sample.return_ = sample.reward + gamma * compute_returns(sample.child, gamma)
            children = sample.child.samples
            sample.agent_returns = {
                agent: reward + gamma * float(np.mean([c.agent_returns.get(agent, c.return_) for c in children]))
                for agent, reward in sample.agent_rewards.items()
            }
        else:
            _leaf_returns(sample, gamma)
    if node.greedy is not None:
        _greedy_returns(node.greedy, gamma)
    return float(np.mean([s.return_ for s in node.samples])) if node.samples else 0.0


def _leaf_returns(sample: JointSample, gamma: float) -> None:
    def future(reward: float) -> float:
        return absorbed_future(reward, sample.skipped_turns, sample.levels_per_turn, gamma)

    sample.return_ = sample.reward + future(sample.reward)
    sample.agent_returns = {agent: reward + future(reward) for agent, reward in sample.agent_rewards.items()}


def absorbed_future(reward: float, skipped_turns: int, levels_per_turn: int, gamma: float) -> float:
    """What a solved state keeps paying for the turns it skipped: Σ_{j=1..k} gamma^(j·L) · reward.

    >>> absorbed_future(4.0, 1, 1, 0.9)
    3.6
    """
    return float(sum(gamma ** (j * levels_per_turn) for j in range(1, skipped_turns + 1)) * reward)


def sibling_groups(roots: Sequence[Node]) -> list[Group]:
    """Every expanded node of every tree as a group of siblings (turn-wise grouping), depth first."""
    groups: list[Group] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if not node.samples:
            continue
        groups.append(
            Group(
                returns=np.array([s.return_ for s in node.samples], dtype=np.float64),
                rewards=np.array([s.reward for s in node.samples], dtype=np.float64),
                agents=node.acting,
                depth=node.depth,
                samples=tuple(node.samples),
                agent_returns=np.array(
                    [[s.agent_returns.get(a, s.return_) for a in node.acting] for s in node.samples], dtype=np.float64
                ).reshape(len(node.samples), len(node.acting)),
                greedy=node.greedy,
            )
        )
        stack.extend(reversed([s.child for s in node.samples if s.child is not None]))
    return groups


def should_expand(node: Node, early_stop_reward: float | None) -> bool:
    """Expand a node's children unless early stopping says its samples are good enough already."""
    if early_stop_reward is None or not node.samples:
        return True
    return float(np.mean([s.reward for s in node.samples])) < early_stop_reward


# ---------------------------------------------------------------------------- env side
def root_node(env: Any, seed: int | None = None, options: Mapping[str, Any] | None = None) -> Node:
    """Reset ``env`` and wrap the state; the env object becomes the node's (copied before each step)."""
    observations, infos = env.reset(seed=seed, options=dict(options) if options else None)
    horizon = getattr(env, "num_turns", None)
    levels = len(env.possible_agents) if getattr(env, "protocol", "parallel") == "sequential" else 1
    node = _node(env, observations, infos, depth=0)
    node.horizon = horizon if isinstance(horizon, int) else None
    node.levels_per_turn = levels
    return node


def _node(env: Any, observations: Mapping[str, str], infos: Mapping[str, Mapping], depth: int,
          parent: Node | None = None) -> Node:
    acting = tuple(a for a in env.agents if infos.get(a, {}).get("active", True))
    task_id = next((str(i["task_id"]) for i in infos.values() if "task_id" in i), "")
    node = Node(env=env, observations=dict(observations), acting=acting, task_id=task_id, depth=depth)
    if parent is not None:
        node.horizon, node.levels_per_turn = parent.horizon, parent.levels_per_turn
    return node


def expand(
    nodes: Sequence[Node],
    sampler: Sampler,
    group_size: int,
    joint_mode: str,
    pool: ThreadPoolExecutor,
    greedy_sampler: Sampler | None = None,
) -> list[Node]:
    """Sample, combine and step every node (one sampler call for all, and one ``greedy_sampler`` call
    when given); return the new child nodes."""
    requests = [(agent, node.observations[agent]) for node in nodes for agent in node.acting]
    completions = iter(sampler(requests, group_size))
    jobs = []
    for node in nodes:
        per_agent = {agent: next(completions) for agent in node.acting}
        for combo in joint_indices(group_size, len(node.acting), joint_mode):
            replies = {agent: per_agent[agent][g] for agent, g in zip(node.acting, combo)}
            node.samples.append(JointSample(replies=replies, observations=dict(node.observations)))
            jobs.append((node, node.samples[-1]))
    greedy_jobs = _greedy_jobs(nodes, requests, greedy_sampler)
    branches = [copy.deepcopy(node.env) for node, _ in jobs + greedy_jobs]
    actions = [{a: c.text for a, c in sample.replies.items()} for _, sample in jobs + greedy_jobs]
    results = step_many(branches, actions, executor=pool)  # one sandbox batch for all coding copies
    greedy_steps = zip(greedy_jobs, branches[len(jobs):], results[len(jobs):])
    chains = [_greedy_step(node, sample, branch, result) for (node, sample), branch, result in greedy_steps]
    _finish_greedy_turns([c for c in chains if c is not None], greedy_sampler, pool)
    children = []
    for (node, sample), branch, (observations, rewards, terms, truncs, infos) in zip(jobs, branches, results):
        _record(sample, rewards, infos, node)
        sample.done = not branch.agents or all(terms.get(a, False) or truncs.get(a, False) for a in terms)
        if not sample.done:
            sample.child = _node(branch, observations, infos, depth=node.depth + 1, parent=node)
            children.append(sample.child)
    return children


def _greedy_jobs(nodes: Sequence[Node], requests: Sequence[tuple[str, str]],
                 greedy_sampler: Sampler | None) -> list[tuple[Node, JointSample]]:
    """One greedy joint reply per node (a single batched call), to be stepped with the group."""
    if greedy_sampler is None:
        return []
    greedy = iter(greedy_sampler(requests, 1))
    jobs = []
    for node in nodes:
        replies = {agent: next(greedy)[0] for agent in node.acting}
        node.greedy = JointSample(replies=replies, observations=dict(node.observations))
        jobs.append((node, node.greedy))
    return jobs


def _greedy_step(node: Node, sample: JointSample, branch: Any, result: tuple) -> Node | None:
    """Record a stepped greedy reply; the node from which its turn goes on, when the turn has not
    ended (sequential protocol: a turn pays only with its last agent's step)."""
    observations, rewards, terms, truncs, infos = result
    _record(sample, rewards, infos, node)
    done = not branch.agents or all(terms.get(a, False) or truncs.get(a, False) for a in terms)
    if done or (node.depth + 1) % node.levels_per_turn == 0:
        return None
    sample.child = _node(branch, observations, infos, depth=node.depth + 1, parent=node)
    return sample.child if sample.child.acting else None


def _finish_greedy_turns(chains: list[Node], greedy_sampler: Sampler | None, pool: ThreadPoolExecutor) -> None:
    """Continue each greedy reply greedily to the end of its turn (one batched greedy call and one
    parallel env step per level), so that the baseline of an agent that is not the turn's last holds
    the turn's reward, not the 0 of a step in mid-turn. Each link is ``child.samples[0]``."""
    while chains and greedy_sampler is not None:
        requests = [(agent, node.observations[agent]) for node in chains for agent in node.acting]
        greedy = iter(greedy_sampler(requests, 1))
        for node in chains:
            replies = {agent: next(greedy)[0] for agent in node.acting}
            node.samples.append(JointSample(replies=replies, observations=dict(node.observations)))
        actions = [{a: c.text for a, c in node.samples[0].replies.items()} for node in chains]
        results = step_many([node.env for node in chains], actions, executor=pool)  # the chain's own env
        steps = [_greedy_step(node, node.samples[0], node.env, result) for node, result in zip(chains, results)]
        chains = [node for node in steps if node is not None]


def _greedy_returns(sample: JointSample, gamma: float) -> None:
    """A greedy reply's return: its reward, plus gamma times the return of its greedy continuation to
    the turn's end (if any), plus the solved-state rule at the end."""
    link = sample.child.samples[0] if sample.child is not None and sample.child.samples else None
    if link is None:
        _leaf_returns(sample, gamma)
        return
    _greedy_returns(link, gamma)
    sample.return_ = sample.reward + gamma * link.return_
    sample.agent_returns = {agent: reward + gamma * link.agent_returns.get(agent, link.return_)
                            for agent, reward in sample.agent_rewards.items()}


def _record(sample: JointSample, rewards: Mapping[str, float], infos: Mapping[str, Mapping], node: Node) -> None:
    sample.agent_rewards = {agent: float(value) for agent, value in rewards.items()}
    sample.infos = {agent: dict(info) for agent, info in infos.items()}
    info = next(iter(infos.values()), {})
    sample.reward = joint_reward(rewards, info)
    sample.components = {k: float(v) for k, v in dict(info.get("reward_components", {})).items()}
    sample.solved = bool(info.get("solved", False))
    if sample.solved:
        _absorb(sample, node)
    sample.tests_passed = tests_share(info)


def _absorb(sample: JointSample, node: Node) -> None:
    """Make ``sample`` absorbing: its episode stops here (solved, or cut by early stopping) and its
    return pays its reward again for each turn the episode had left (``env.num_turns`` minus the
    turn in ``infos``). Envs that do not say their number of turns get nothing for skipped turns."""
    turn = next(iter(sample.infos.values()), {}).get("turn")
    if node.horizon is not None and isinstance(turn, int):
        sample.skipped_turns = max(node.horizon - turn, 0)
        sample.levels_per_turn = node.levels_per_turn


def tests_share(info: Mapping[str, Any]) -> float | None:
    """Share of the problem's tests that passed, from an ``infos`` entry's ``details`` (None: no tests)."""
    details = info.get("details") or {}
    if isinstance(details, Mapping) and details.get("total"):
        return float(details.get("passed", 0)) / float(details["total"])
    return None


def grow_trees(
    roots: Sequence[Node],
    sampler: Sampler,
    *,
    group_size: int,
    joint_mode: str = "aligned",
    gamma: float = 1.0,
    early_stop_reward: float | None = None,
    max_depth: int = 64,
    pool: ThreadPoolExecutor | None = None,
    greedy_sampler: Sampler | None = None,
) -> list[Group]:
    """Grow every root's tree level by level (one batched sampler call per level), compute returns,
    and return the sibling groups. With ``greedy_sampler`` every node also gets its greedy joint reply."""
    own_pool = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=8)
    try:
        frontier = [node for node in roots if node.acting]
        for _ in range(max_depth):
            if not frontier:
                break
            expand(frontier, sampler, group_size, joint_mode, pool, greedy_sampler)
            frontier = _next_frontier(frontier, early_stop_reward)
    finally:
        if own_pool:
            pool.shutdown()
    for root in roots:
        compute_returns(root, gamma)
    return sibling_groups(roots)


def _next_frontier(expanded: Sequence[Node], early_stop_reward: float | None) -> list[Node]:
    frontier = []
    for node in expanded:
        if not should_expand(node, early_stop_reward):
            for sample in node.samples:
                if sample.child is not None:  # cut here, not ended by the env: absorbing, like a solved one
                    _absorb(sample, node)
                sample.child = None  # the branch ends here: its samples count as leaves
            continue
        frontier.extend(s.child for s in node.samples if s.child is not None and s.child.acting)
    return frontier
