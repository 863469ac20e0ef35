"""Baselines: reply generators, the methods of the literature, and the team policies that play them
through the env package's episode runner (:mod:`llm_coop_envs.core.runner`)."""

from benchmarks.baselines.generator import Reply, ReplyGenerator, ScriptedGenerator
from benchmarks.baselines.methods import METHODS, Method, get_method, register_method

__all__ = ["METHODS", "Method", "Reply", "ReplyGenerator", "ScriptedGenerator", "get_method", "register_method"]
