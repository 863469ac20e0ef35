"""Writing collaborations: ``tldr-v2`` (short + detailed summary) and ``arxiv_intro-v2`` (background + methods).

Import the env modules (:mod:`.tldr`, :mod:`.arxiv_intro`) or create them with
``llm_coop_envs.make``; this package only re-exports the reward configuration.
"""

from llm_coop_envs.writing.bands import Band
from llm_coop_envs.writing.thresholds import (
    ARXIV_LEVELS, ARXIV_V1_LEVELS, ARXIV_V2_LEVELS, TLDR_LEVELS, TLDR_V1_LEVELS, TLDR_V2_LEVELS, LevelConfig, OrderCheck,
    RewardWeights,
)
from llm_coop_envs.writing.grader import GraderConfig, GraderError, WritingGrader

__all__ = [
    "ARXIV_LEVELS", "ARXIV_V1_LEVELS", "ARXIV_V2_LEVELS", "TLDR_LEVELS", "TLDR_V1_LEVELS", "TLDR_V2_LEVELS", "Band",
    "GraderConfig", "GraderError", "LevelConfig", "OrderCheck", "RewardWeights", "WritingGrader",
]
