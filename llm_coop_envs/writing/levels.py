"""Deprecated name of :mod:`llm_coop_envs.writing.reward` (the writing reward: the gated levels)."""

import warnings

from llm_coop_envs.writing.reward import *  # noqa: F403
from llm_coop_envs.writing.reward import LEVELS, PairScore, PairTexts, gates_passed_by_role, score_pair  # noqa: F401

warnings.warn("llm_coop_envs.writing.levels is now llm_coop_envs.writing.reward; the old name will be removed.",
              DeprecationWarning, stacklevel=2)
