"""llm-coop-envs: writing and coding collaboration tasks as PettingZoo parallel environments.

>>> import llm_coop_envs
>>> env = llm_coop_envs.make("coop_humaneval-v0")
>>> observations, infos = env.reset(seed=0)

Importing this package is cheap: environments (and their dependencies) load only when made.
"""

from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.reward_fns import RewardFn, batched_reward
from llm_coop_envs.registration import (
    EnvSpec,
    RegistrationError,
    RemovedEnvError,
    UnknownEnvError,
    make,
    make_aec,
    register,
    registered_ids,
    spec,
)

__version__ = "0.1.0"


def step_many(envs, actions, executor=None):
    """One step of many envs, their sandbox runs batched: see :func:`llm_coop_envs.core.env.step_many`."""
    from llm_coop_envs.core.env import step_many as _step_many

    return _step_many(envs, actions, executor)


__all__ = [
    "EnvSpec",
    "RegistrationError",
    "RemovedEnvError",
    "RewardFn",
    "RewardResult",
    "UnknownEnvError",
    "batched_reward",
    "make",
    "make_aec",
    "register",
    "registered_ids",
    "spec",
    "step_many",
]

from llm_coop_envs import builtin_envs as _builtin_envs  # noqa: E402, F401  (registers the bundled ids)
