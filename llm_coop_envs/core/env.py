"""CoopEnv: any :class:`~llm_coop_envs.core.task.Task` as a PettingZoo ``ParallelEnv``.

Each agent observes text and replies with text; all agents receive the same joint reward, unless the
task gives each agent its own (``Evaluation.agent_rewards``, e.g. the coding and writing envs'
``reward_mode="per_agent"``): then ``rewards[agent]`` is the agent's own reward, and ``infos[agent]``
also carries ``joint_reward`` (the joint total) and ``agent_reward_components`` (the agent's own).
An episode has ``num_turns`` turns. In the ``"parallel"`` protocol every agent replies in each
env step (one step per turn). In the ``"sequential"`` protocol a turn takes one step per agent,
in the task's role order: only the agent whose ``infos[agent]["active"]`` is true acts (the others'
actions may be omitted and are ignored), later agents see what earlier agents wrote this turn, and
the joint reward arrives at the turn's last step (earlier steps pay 0).

Rendering follows Gymnasium and PettingZoo: ``render_mode="ansi"`` makes ``render()`` return the
transcript so far; ``render_mode="human"`` prints the problem's header at ``reset()`` and each turn
as it ends, and ``render()`` prints the whole transcript and returns ``None``. With no render mode
``render()`` warns and still returns the transcript (as older code expects); ``transcript()`` gives
it without a render mode.

``max_cycles`` caps the env steps of an episode as in PettingZoo's own environments: the step that
reaches it returns ``truncations`` true for every agent and ends the episode (``None``: no cap
beyond ``num_turns``).

Batching: :func:`step_many` steps many envs at once (e.g. a group's copies of one state), and
``env.step`` is its batch of one, so the step sequence (check every env, take the actions, score
the finished turns, then feedback, history and observations) is written once. Stepped one at a
time, every copy would pay a round trip to the sandbox and wait idle while its program runs; here
the joint replies of all copies go to their task in one call when it scores batches
(``evaluate_many(items, executor)``: the coding and writing tasks; a task whose class sets
``reads_last_turn`` also gets ``last_turn``, which replies end their episode's last turn, so it can
skip work whose only use is feedback no agent will read). A coding task hands them to the
sandbox as one batch: each program still runs on its own, isolated, and the results equal one step
each. Either task calls a batched reward function once for all of them
(:mod:`llm_coop_envs.core.reward_fns`). Envs that are not a ``CoopEnv`` (a wrapper, say) are
stepped as they are (on ``executor`` when one is given).
"""

from __future__ import annotations

import copy
import difflib
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
from gymnasium import logger
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from llm_coop_envs.core.episode import Episode
from llm_coop_envs.core.spaces import UnicodeText
from llm_coop_envs.core.task import Evaluation, Task
from llm_coop_envs.core.transcript import (
    partner_context,
    render_transcript,
    render_turn,
    revision_prompt,
    transcript_header,
)
from llm_coop_envs.feedback import FeedbackContext, TestsFeedback, feedback_provider, is_deterministic
from llm_coop_envs.sandbox.text import safe_text

PROTOCOLS = ("parallel", "sequential")
RESET_OPTIONS = ("task_id", "index")
RENDER_MODES = ("human", "ansi")
DEFAULT_MAX_REPLY_CHARS = 100_000
MAX_FEEDBACK_CHARS = 20_000  # feedback is untrusted text (it may quote a program's output)

StepResult = tuple[dict, dict, dict, dict, dict]


class CoopEnv(ParallelEnv):
    """A cooperative text environment over a task; see the module docstring for the protocol."""

    metadata = {"name": "coop_env", "render_modes": list(RENDER_MODES), "is_parallelizable": True}

    def __init__(
        self,
        task: Task,
        *,
        num_turns: int = 1,
        feedback: Any = "tests",
        feedback_options: Mapping[str, Any] | None = None,
        protocol: str = "parallel",
        share_replies: bool = False,
        stop_when_solved: bool = True,
        max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ) -> None:
        _validate_options(num_turns, protocol, max_reply_chars, render_mode, max_cycles)
        self.task = task
        self.num_turns = num_turns
        self.feedback = feedback_provider(feedback, **dict(feedback_options or {}))
        self.protocol = protocol
        self.share_replies = share_replies
        self.stop_when_solved = stop_when_solved
        self.max_reply_chars = max_reply_chars
        self.max_cycles = max_cycles
        self.render_mode = render_mode
        self.possible_agents = list(task.agents)
        self.agents: list[str] = []
        self._spaces = {agent: UnicodeText() for agent in self.possible_agents}
        self.state_space = UnicodeText()
        self._np_random: np.random.Generator | None = None
        self._ids: dict[str, int] | None = None
        self._episode: Episode | None = None

    # ----------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> UnicodeText:
        return self._space(agent)

    def action_space(self, agent: str) -> UnicodeText:
        return self._space(agent)

    def _space(self, agent: str) -> UnicodeText:
        try:
            return self._spaces[agent]
        except (KeyError, TypeError):
            raise ValueError(f"Unknown agent {agent!r}; this env's agents are {self.possible_agents}.") from None

    # ----------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        """Start an episode. ``options={"task_id": id_or_index}`` (or ``{"index": i}``) picks the problem;
        otherwise it is drawn from the seeded generator. A misspelt option (``taskid``) is an error
        rather than silently opening a random problem; an unrelated key is ignored with a warning."""
        _check_reset_options(options or {})
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        index = self._pick_index(options or {})
        prompts = {agent: self.task.prompt(index, agent) for agent in self.possible_agents}
        self._episode = Episode(
            index=index, task_id=self.task.task_id(index), prompts=prompts, turn_prompts=dict(prompts), observations={}
        )
        self._episode.observations = self._turn_observations()
        self.agents = list(self.possible_agents)
        infos = {agent: self._info(agent) for agent in self.agents}
        if self.render_mode == "human":
            _show(transcript_header(self._episode.task_id))
        return dict(self._episode.observations), infos

    def _pick_index(self, options: Mapping[str, Any]) -> int:
        choice = options.get("task_id", options.get("index"))
        if choice is None:
            return int(self._np_random.integers(len(self.task)))
        if isinstance(choice, (int, np.integer)) and not isinstance(choice, bool):
            if not 0 <= choice < len(self.task):  # -1 is a mistake here, not "the last problem"
                raise IndexError(f"Problem index {choice} is out of range: this split has {len(self.task)} problems "
                                 f"(indices 0 to {len(self.task) - 1}).")
            return int(choice)
        if isinstance(choice, str):
            return self._index_of(choice)
        raise TypeError(f"options['task_id'] must be a task id string or an index, got {type(choice).__name__}.")

    def _index_of(self, task_id: str) -> int:
        finder = getattr(self.task, "index_of", None)
        found = finder(task_id) if callable(finder) else None
        if found is not None:  # an endless suite names its problems without a scan
            return found
        if self._ids is None:
            self._ids = {self.task.task_id(i): i for i in range(len(self.task))}
        try:
            return self._ids[task_id]
        except KeyError:
            examples = ", ".join(list(self._ids)[:3])
            raise ValueError(
                f"No problem with task_id {task_id!r} in this split ({len(self._ids)} problems, e.g. {examples})."
            ) from None

    # ----------------------------------------------------------------- step
    def step(self, actions: Mapping[str, str]) -> StepResult:
        """Take one reply per active agent; returns observations, rewards, terminations, truncations, infos.
        The batch of one of :func:`step_many`."""
        return step_many([self], [actions])[0]

    # The steps of a step, in the order step_many takes them for every env of a batch.
    def _check_step(self, actions: Mapping[str, str]) -> None:
        self._require_running()
        self._check_actions(actions, self._active_agents())

    def _take_actions(self, actions: Mapping[str, str]) -> bool:
        """Records the checked actions; True when this step ends a turn (a joint reply to score)."""
        episode = self._episode
        for agent in self._active_agents():
            episode.pending[agent] = actions[agent]
        episode.cycles += 1
        return not (self.protocol == "sequential" and episode.phase < len(self.possible_agents) - 1)

    def _truncated(self) -> bool:
        return self.max_cycles is not None and self._episode.cycles >= self.max_cycles

    def _joint_reply(self) -> tuple[int, dict[str, str]]:
        """(problem index, cleaned replies) of the turn being finished: what the task scores."""
        episode = self._episode
        return episode.index, {a: self._clean(episode.pending[a]) for a in self.possible_agents}

    def _advance_phase(self, episode: Episode, truncated: bool):
        live = list(self.agents)
        if truncated:
            self.agents = []
        else:
            episode.phase += 1
            episode.observations = self._turn_observations()
        zeros = dict.fromkeys(live, 0.0)
        falses = dict.fromkeys(live, False)
        infos = {agent: self._info(agent) for agent in live}
        return dict(episode.observations), zeros, falses, dict.fromkeys(live, truncated), infos

    def _finish_turn(self, episode: Episode, truncated: bool, evaluation: Evaluation):
        replies = {agent: episode.pending[agent] for agent in self.possible_agents}
        done = episode.turn >= self.num_turns or (self.stop_when_solved and evaluation.solved)
        feedback = self._feedback(episode, replies, evaluation, done or truncated)
        feedback = {a: safe_text(str(text), MAX_FEEDBACK_CHARS) for a, text in feedback.items()}
        episode.history.append(self._turn_record(episode, replies, evaluation, feedback))
        episode.last_replies, episode.pending = replies, {}
        played_turn, live = episode.turn, list(self.agents)
        if done or truncated:
            self.agents = []
        else:
            episode.turn, episode.phase = episode.turn + 1, 0
            episode.turn_prompts = {a: self._revision(a, feedback.get(a, "")) for a in self.possible_agents}
            episode.observations = self._turn_observations()
        # infos name the turn the reward belongs to, and "active" says who acts next (nobody once done)
        infos = {agent: self._info(agent, evaluation, feedback.get(agent, ""), played_turn) for agent in live}
        rewards = {agent: evaluation.reward_of(agent).total for agent in live}
        terminations = dict.fromkeys(live, done)
        truncations = dict.fromkeys(live, truncated)
        observations = dict(episode.observations)
        if self.render_mode == "human":
            _show(render_turn(episode.history[-1]))
        return observations, rewards, terminations, truncations, infos

    def _feedback(
        self, episode: Episode, replies: Mapping[str, str], evaluation: Evaluation, done: bool
    ) -> dict[str, str]:
        context = FeedbackContext(
            task_id=episode.task_id,
            turn=episode.turn,
            num_turns=self.num_turns,
            prompts=episode.prompts,
            replies=replies,
            evaluation=evaluation,
            episode_ends=done,
        )
        try:
            return dict(self.feedback(context))
        except Exception as error:  # a broken provider must not end the episode: fall back, say why
            fallback = TestsFeedback()(context)
            return {a: f"{text}\n(feedback provider failed: {type(error).__name__})" for a, text in fallback.items()}

    def _turn_record(self, episode: Episode, replies, evaluation: Evaluation, feedback) -> dict[str, Any]:
        return {
            "turn": episode.turn,
            "observations": dict(episode.observations),
            "replies": dict(replies),
            "reward": evaluation.reward.total,
            "components": dict(evaluation.reward.components),
            **({"agent_rewards": {a: r.total for a, r in evaluation.agent_rewards.items()}}
               if evaluation.agent_rewards is not None else {}),
            "solved": evaluation.solved,
            "feedback": dict(feedback),
        }

    # ----------------------------------------------------------------- observations
    def _active_agents(self) -> list[str]:
        if self.protocol == "parallel":
            return list(self.agents)
        return [self.possible_agents[self._episode.phase]]

    def _turn_observations(self) -> dict[str, str]:
        """Observations for the current phase: the turn's prompts, adjusted for the sequential protocol."""
        episode = self._episode
        if self.protocol == "parallel":
            return dict(episode.turn_prompts)
        acting = self.possible_agents[episode.phase]
        earlier = {a: episode.pending[a] for a in self.possible_agents[: episode.phase]}
        observations = {a: f"Waiting for the {acting} agent to reply." for a in self.possible_agents}
        observations[acting] = partner_context(episode.turn_prompts[acting], earlier)
        return observations

    def _revision(self, agent: str, feedback: str) -> str:
        episode = self._episode
        partners = None  # decentralised by default: an agent sees only its own history
        if self.share_replies:
            partners = {a: r for a, r in episode.last_replies.items() if a != agent}
        return revision_prompt(
            episode.prompts[agent], episode.last_replies[agent], feedback, episode.turn, self.num_turns, partners
        )

    def _info(
        self, agent: str, evaluation: Evaluation | None = None, feedback: str = "", turn: int | None = None
    ) -> dict[str, Any]:
        episode = self._episode
        info: dict[str, Any] = {
            "task_id": episode.task_id,
            "turn": episode.turn if turn is None else turn,
            "active": agent in self._active_agents() if self.agents else False,
        }
        if evaluation is not None:
            info.update(
                reward_components=dict(evaluation.reward.components),
                solved=evaluation.solved,
                feedback=feedback,
                details=dict(evaluation.details),
            )
            if evaluation.agent_rewards is not None:
                info.update(joint_reward=evaluation.reward.total,
                            agent_reward_components=dict(evaluation.reward_of(agent).components))
        return info

    # ----------------------------------------------------------------- input checks
    def _require_running(self) -> Episode:
        if self._episode is None:
            raise RuntimeError("step() called before reset(): call env.reset() to start an episode.")
        if not self.agents:
            raise RuntimeError("The episode has ended: call env.reset() to start a new one.")
        return self._episode

    def _check_actions(self, actions: Mapping[str, str], active: list[str]) -> None:
        if not isinstance(actions, Mapping):
            raise TypeError(f"step() takes a dict {{agent: reply}}, got {type(actions).__name__}.")
        unknown = [a for a in actions if a not in self.possible_agents]
        if unknown:
            raise ValueError(f"Unknown agent(s) {unknown}; this env's agents are {self.possible_agents}.")
        missing = [a for a in active if a not in actions]
        if missing:
            raise ValueError(f"No reply for active agent(s) {missing}; every active agent must reply each step.")
        for agent in active:
            if not isinstance(actions[agent], str):
                raise TypeError(f"The reply of {agent!r} must be a str, got {type(actions[agent]).__name__}.")

    def _clean(self, reply: str) -> str:
        """Cap the length and replace lone surrogates, so a task never sees text it cannot encode."""
        reply = reply[: self.max_reply_chars]
        return reply.encode("utf-8", "replace").decode("utf-8")

    # ----------------------------------------------------------------- extras
    def render(self) -> str | None:
        """Render as ``render_mode`` says (Gymnasium's and PettingZoo's conventions): ``"ansi"`` returns
        the transcript so far; ``"human"`` prints it and returns ``None`` (each turn is also printed
        as it ends); ``None`` warns that no mode was chosen and returns the transcript, as before."""
        if self.render_mode == "human":
            _show(self.transcript())
            return None
        if self.render_mode is None:
            logger.warn(
                "render() was called without a render_mode: make the env with render_mode='ansi' (render() "
                "returns the transcript) or 'human' (it prints it); env.transcript() gives the text with no mode.",
                stacklevel=2,
            )
        return self.transcript()

    def transcript(self) -> str:
        """The episode so far as a readable text: each turn's observations, replies, reward and feedback."""
        if self._episode is None:
            return "(no episode: call reset() first)"
        return render_transcript(self._episode.task_id, self._episode.history)

    def state(self) -> str:
        """The joint state for a centralised critic: every agent's current observation, in role order."""
        if self._episode is None:
            raise RuntimeError("state() called before reset().")
        return "\n\n".join(f"[{a}]\n{self._episode.observations[a]}" for a in self.possible_agents)

    @property
    def deterministic_feedback(self) -> bool:
        """False when the feedback provider (e.g. an outside reviewer model) may vary between runs."""
        return is_deterministic(self.feedback)

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, _ = seeding.np_random()
        return self._np_random

    def close(self) -> None:
        """Nothing to release: sandbox workers are shared by all envs and stop at interpreter exit."""

    def __deepcopy__(self, memo: dict) -> CoopEnv:
        # The task (dataset, reward config) and the feedback provider are shared read-only: a branch
        # copies only the episode and the random generator.
        clone = copy.copy(self)
        clone.agents = list(self.agents)
        clone._np_random = copy.deepcopy(self._np_random, memo)
        clone._episode = self._episode.copy() if self._episode is not None else None
        return clone


def step_many(envs: Sequence[Any], actions: Sequence[Mapping[str, str]],
              executor: Executor | None = None) -> list[StepResult]:
    """``[env.step(a) for env, a in zip(envs, actions)]``, with the scoring batched where the task
    supports it (see the module docstring). The envs must be distinct objects (copies of one state
    are fine). Invalid actions for any ``CoopEnv`` raise before any env changes."""
    envs, actions = list(envs), list(actions)
    if len(envs) != len(actions):
        raise ValueError(f"step_many got {len(envs)} envs but {len(actions)} actions.")
    if len({id(env) for env in envs}) != len(envs):
        raise ValueError("step_many needs distinct env objects (copy.deepcopy an env to branch it).")
    ours = [i for i, env in enumerate(envs) if isinstance(env, CoopEnv)]
    others = [i for i, env in enumerate(envs) if not isinstance(env, CoopEnv)]
    for i in ours:
        envs[i]._check_step(actions[i])
    results: list[StepResult | None] = [None] * len(envs)
    for i, result in zip(others, map_on(executor, lambda i: envs[i].step(actions[i]), others)):
        results[i] = result
    finishing = []
    for i in ours:
        if envs[i]._take_actions(actions[i]):
            finishing.append(i)
        else:
            results[i] = envs[i]._advance_phase(envs[i]._episode, envs[i]._truncated())
    evaluations = _evaluate(envs, finishing, executor)

    def finish(i: int) -> StepResult:  # feedback, history, observations
        return envs[i]._finish_turn(envs[i]._episode, envs[i]._truncated(), evaluations[i])

    for i, result in zip(finishing, map_on(executor, finish, finishing)):
        results[i] = result
    return results  # type: ignore[return-value]


def _evaluate(envs: list[CoopEnv], positions: list[int], executor: Executor | None) -> dict[int, Evaluation]:
    """One ``evaluate_many`` call per task object (copies of an env share their task), which may use
    ``executor`` for work it does one reply at a time; a task without it: ``evaluate`` per reply."""
    by_task: dict[int, list[int]] = {}
    for i in positions:
        by_task.setdefault(id(envs[i].task), []).append(i)
    evaluations = {}
    for group in by_task.values():
        task = envs[group[0]].task
        joint = [envs[i]._joint_reply() for i in group]
        if callable(getattr(task, "evaluate_many", None)):
            last = {"last_turn": [envs[i]._episode.turn >= envs[i].num_turns for i in group]}
            scored = task.evaluate_many(joint, executor, **(last if getattr(task, "reads_last_turn", False) else {}))
        else:
            scored = map_on(executor, lambda reply: task.evaluate(*reply), joint)
        evaluations.update(zip(group, scored))
    return evaluations


def map_on(executor: Executor | None, function: Callable[[Any], Any], items: list) -> list:
    """``[function(item) for item in items]``, on ``executor`` when one is given and there are two or more."""
    if executor is None or len(items) < 2:
        return [function(item) for item in items]
    return list(executor.map(function, items))


def _show(text: str) -> None:
    """Print for ``render_mode="human"``: what the terminal cannot encode (a reply's lone surrogate,
    say) is shown as a backslash escape instead of raising."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))


def _check_reset_options(options: Mapping[str, Any]) -> None:
    """A misspelt option (close to a valid one) is an error; an unrelated key is ignored with a warning,
    since PettingZoo's own API tests pass an arbitrary option to check the signature."""
    if not isinstance(options, Mapping):
        raise TypeError(f"reset options must be a dict such as {{'task_id': ...}}, got {type(options).__name__}.")
    unknown = [key for key in options if key not in RESET_OPTIONS]
    typos = {key: difflib.get_close_matches(str(key).lower(), RESET_OPTIONS, n=1, cutoff=0.6) for key in unknown}
    misspelt = {key: close[0] for key, close in typos.items() if close}
    if misspelt:
        guesses = ", ".join(f"{key!r} -> {close!r}" for key, close in misspelt.items())
        raise ValueError(f"Unknown reset option(s) {list(misspelt)} (did you mean {guesses}?); the valid options are "
                         f"{list(RESET_OPTIONS)}.")
    if unknown:
        warnings.warn(f"reset ignores the option(s) {unknown}; the valid options are {list(RESET_OPTIONS)}.", stacklevel=3)


def _validate_options(
    num_turns: int, protocol: str, max_reply_chars: int, render_mode: str | None, max_cycles: int | None
) -> None:
    if not isinstance(num_turns, int) or isinstance(num_turns, bool) or num_turns < 1:
        raise ValueError(f"num_turns must be a positive integer, got {num_turns!r}.")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}.")
    if not isinstance(max_reply_chars, int) or max_reply_chars < 1:
        raise ValueError(f"max_reply_chars must be a positive integer, got {max_reply_chars!r}.")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}.")
    if max_cycles is not None and (not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or max_cycles < 1):
        raise ValueError(f"max_cycles must be a positive integer or None, got {max_cycles!r}.")
