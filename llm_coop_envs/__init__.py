"""llm-coop-envs: writing and coding collaboration tasks as PettingZoo parallel environments.

>>> import llm_coop_envs
>>> env = llm_coop_envs.make("coop_humaneval-v0")
>>> observations, infos = env.reset(seed=0)

Importing this package is cheap: environments (and their dependencies) load only when made.
"""

from llm_coop_envs.registration import (
    EnvSpec,
    RegistrationError,
    UnknownEnvError,
    make,
    make_aec,
    register,
    registered_ids,
    spec,
)

__version__ = "0.1.0"

__all__ = [
    "EnvSpec",
    "RegistrationError",
    "UnknownEnvError",
    "make",
    "make_aec",
    "register",
    "registered_ids",
    "spec",
]

from llm_coop_envs import builtin_envs as _builtin_envs  # noqa: E402  (registers the bundled ids)
