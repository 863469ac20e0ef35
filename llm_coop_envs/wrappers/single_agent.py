"""One agent of a CoopEnv as a Gymnasium ``Env``; the other roles reply with fixed policies.

Used for single-agent baselines (one model writes the whole solution as ``main`` while ``helper``
stays silent) and for tools that only speak Gymnasium. Every registered id is also a Gymnasium id,
``llm_coop_envs/<id>``, built by :func:`make_single_agent`:

    >>> import gymnasium, llm_coop_envs
    >>> env = gymnasium.make("llm_coop_envs/coop_basics-v2", render_mode="ansi")
    >>> observation, info = env.reset(seed=0)

(``gymnasium.make("llm_coop_envs:llm_coop_envs/coop_basics-v2")`` imports the package itself.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

PartnerPolicy = Callable[[str], str]


def silent(observation: str) -> str:
    """A partner that never writes anything."""
    return ""


class SingleAgentEnv(gym.Env):
    """Drive ``agent`` of a PettingZoo ``CoopEnv``; ``partners`` maps each other role to a policy.

    Rewards are the joint reward. In the sequential protocol, steps where ``agent`` is not active
    are played by the partners without returning control.
    """

    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(self, env: Any, agent: str, partners: Mapping[str, PartnerPolicy] | None = None) -> None:
        if agent not in env.possible_agents:
            raise ValueError(f"{agent!r} is not an agent of this env; choose one of {env.possible_agents}.")
        self.env = env
        self.agent = agent
        self.render_mode = getattr(env, "render_mode", None)  # the wrapped env renders: it owns the mode
        others = [a for a in env.possible_agents if a != agent]
        self.partners = {a: silent for a in others} | dict(partners or {})
        self.observation_space = env.observation_space(agent)
        self.action_space = env.action_space(agent)
        self._observations: dict[str, str] = {}
        self._infos: dict[str, dict] = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._observations, self._infos = self.env.reset(seed=seed, options=options)
        self._play_partners_until_my_turn()  # nothing is paid before the agent's first move
        return self._observations[self.agent], self._infos[self.agent]

    def step(self, action: str):
        if not isinstance(action, str):
            raise TypeError(f"The action must be a str, got {type(action).__name__}.")
        actions = {a: self._partner_reply(a) for a in self._active() if a != self.agent}
        if self.agent in self._active():
            actions[self.agent] = action
        reward, done = self._advance(actions)
        if not done:
            extra, done = self._play_partners_until_my_turn()
            reward += extra
        info = self._infos.get(self.agent, {})
        return self._observations.get(self.agent, ""), reward, done, False, info

    def render(self) -> str | None:
        """As the wrapped env renders: ``"ansi"`` returns the transcript, ``"human"`` prints it."""
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def _active(self) -> list[str]:
        return [a for a in self.env.agents if self._infos.get(a, {}).get("active", True)]

    def _partner_reply(self, agent: str) -> str:
        return self.partners[agent](self._observations[agent])

    def _advance(self, actions: dict[str, str]) -> tuple[float, bool]:
        self._observations, rewards, terminations, _, self._infos = self.env.step(actions)
        return float(rewards.get(self.agent, 0.0)), not self.env.agents

    def _play_partners_until_my_turn(self) -> tuple[float, bool]:
        reward, done = 0.0, not self.env.agents
        while not done and self.agent not in self._active():
            step_reward, done = self._advance({a: self._partner_reply(a) for a in self._active()})
            reward += step_reward
        return reward, done


def default_agent(possible_agents: list[str]) -> str:
    """The agent a Gymnasium id drives unless told: ``main`` when the env has one (in the coding envs it
    writes the function that is tested), otherwise the first agent in role order."""
    return "main" if "main" in possible_agents else possible_agents[0]


def make_single_agent(
    env_id: str, *, agent: str | None = None, partners: Mapping[str, PartnerPolicy] | None = None, **kwargs: Any
) -> SingleAgentEnv:
    """The Gymnasium entry point of ``llm_coop_envs/<env_id>``: ``llm_coop_envs.make(env_id, **kwargs)``
    (``render_mode`` included) seen by ``agent`` (default: :func:`default_agent`), the other roles
    played by ``partners`` (default: silent)."""
    from llm_coop_envs.registration import make

    env = make(env_id, **kwargs)
    return SingleAgentEnv(env, default_agent(env.possible_agents) if agent is None else agent, partners)
