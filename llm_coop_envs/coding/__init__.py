"""Coding collaboration tasks: a helper agent writes ``aux``, the main agent writes the entry point.

Envs: ``coop_humaneval-v2``, ``humaneval-v2``, ``mbpp-v2``, ``coop_basics-v2`` and ``coop_procedural-v1``
(one module each; the module docstring is the env's page). Shared pieces: reply parsing (``parsing``),
test splitting (``tests_split``, ``public_tests``, ``extra_hidden``), program assembly (``program``),
helper-use analysis (``cooperation``, and the counterfactual runs of ``dependence``), rewards
(``reward``, under the version's ``rules``), feedback (``feedback``), prompts (``prompts``) and the
task (``task``).
"""

from llm_coop_envs.coding.task import CodingTask

__all__ = ["CodingTask"]
