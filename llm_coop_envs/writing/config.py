"""Deprecated name of :mod:`llm_coop_envs.writing.thresholds` (the writing reward's thresholds and weights)."""

import warnings

from llm_coop_envs.writing.thresholds import *  # noqa: F403
from llm_coop_envs.writing.thresholds import (  # noqa: F401
    ARXIV_LEVELS, ARXIV_V1_LEVELS, ARXIV_V2_LEVELS, COMPONENTS, TLDR_LEVELS, TLDR_V1_LEVELS, TLDR_V2_LEVELS, LevelConfig,
    OrderCheck, RewardWeights,
)

warnings.warn("llm_coop_envs.writing.config is now llm_coop_envs.writing.thresholds; the old name will be removed.",
              DeprecationWarning, stacklevel=2)
