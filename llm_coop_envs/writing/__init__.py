"""Writing collaborations: ``tldr-v0`` (short + detailed summary) and ``arxiv_intro-v0`` (background + methods).

Import the env modules (:mod:`.tldr`, :mod:`.arxiv_intro`) or create them with
``llm_coop_envs.make``; this package only re-exports the reward configuration.
"""

from llm_coop_envs.writing.bands import Band
from llm_coop_envs.writing.config import ARXIV_LEVELS, TLDR_LEVELS, LevelConfig, RewardWeights

__all__ = ["ARXIV_LEVELS", "TLDR_LEVELS", "Band", "LevelConfig", "RewardWeights"]
