"""Coding collaboration tasks: a helper agent writes ``aux``, the main agent writes the entry point.

Envs: ``coop_humaneval-v1``, ``humaneval-v1``, ``mbpp-v1`` (one module each; the module
docstring is the env's page). Shared pieces: reply parsing (``parsing``), test splitting
(``tests_split``), program assembly (``program``), helper-use analysis (``cooperation``),
rewards (``reward``), feedback (``feedback``), prompts (``prompts``) and the task (``task``).
"""

from llm_coop_envs.coding.task import CodingTask

__all__ = ["CodingTask"]
