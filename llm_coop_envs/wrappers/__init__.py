"""Views of a CoopEnv for other tools: one agent as a Gymnasium env, and transcript recording."""

from llm_coop_envs.wrappers.recording import TranscriptRecorder
from llm_coop_envs.wrappers.single_agent import SingleAgentEnv, make_single_agent

__all__ = ["SingleAgentEnv", "TranscriptRecorder", "make_single_agent"]
