"""Per-agent rewards for the coding tasks (``reward_mode="per_agent"``): each agent's own share of one judgement.

The joint reward is unchanged and stays the default (``reward_mode="joint"``). With ``"per_agent"``
each agent also gets a reward of its own, computed with the task's reward function (``levels`` by
default) from the same step:

* **Reference pairing**, when the problem ships the partner's reference code (``reference_helper`` /
  ``reference_main`` in the row, as every ``coop_basics-v0`` problem does): the agent's code is paired
  with its partner's reference and judged as a program of its own. The helper is scored on
  (its helper + the reference main), main on (the reference helper + its main). Those programs run in
  the same sandbox batch as the joint program (up to 3 programs per step instead of 1).
* **Structure credit**, when there is no reference (``coop_humaneval-v2``, ``humaneval-v2``,
  ``mbpp-v2``): the joint reward's components, shared, except the structure level, which goes to the
  agent that owns it.

In both cases an agent is never paid for its partner's structure component: ``helper_defined``
belongs to the helper, ``main_defined`` to main (so the helper's maximum under ``levels`` is 3.4 and
main's 3.6). With ``team="single"`` the one agent's reward is the joint reward.

The paired programs contain the partner's reference code, which the agent's own code can reach while
it runs; they contain no test and no expected value (the judge keeps those), and nothing of those runs
but the reward reaches the agents (feedback and ``details`` come from the joint program only).
"""

from __future__ import annotations

from collections.abc import Mapping

from llm_coop_envs.core.reward import RewardResult

REWARD_MODES = ("joint", "per_agent")
OWNED_STRUCTURE = {"helper": "helper_defined", "main": "main_defined"}
"""The structure component each role owns; the partner's is removed from an agent's own reward."""
REFERENCE_FIELD = {"helper": "reference_main", "main": "reference_helper"}
"""The row field holding the partner's reference code that an agent is paired with."""


def check_reward_mode(mode: str) -> str:
    if mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {mode!r}.")
    return mode


def partner_reference(row: Mapping[str, object], agent: str) -> str | None:
    """The partner's reference code for ``agent``'s pairing, or None when the problem has none."""
    code = row.get(REFERENCE_FIELD[agent])
    return code if isinstance(code, str) and code.strip() else None


def own_share(reward: RewardResult, agent: str) -> RewardResult:
    """``reward`` without the structure components of the other roles."""
    foreign = {name for role, name in OWNED_STRUCTURE.items() if role != agent}
    return RewardResult.from_components({k: v for k, v in reward.components.items() if k not in foreign})
