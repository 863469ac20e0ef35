"""Isolated execution of untrusted code: run a program and its test snippets under limits.

>>> from llm_coop_envs.sandbox import run_tests, SandboxConfig
>>> result = run_tests("def add(a, b):\\n    return a + b", ["assert candidate(1, 2) == 3"], "add")
>>> result.status, result.passed, result.total
('ok', 1, 1)

See docs/sandbox.md for what is isolated, how, and what the fallback backend does not protect.
"""

from llm_coop_envs.sandbox.api import run_tests
from llm_coop_envs.sandbox.batch import run_tests_batch
from llm_coop_envs.sandbox.backend import SandboxUnavailable, SandboxWarning
from llm_coop_envs.sandbox.config import SandboxConfig
from llm_coop_envs.sandbox.pool import shutdown
from llm_coop_envs.sandbox.result import ExecutionResult, TestOutcome

__all__ = [
    "ExecutionResult", "SandboxConfig", "SandboxUnavailable", "SandboxWarning", "TestOutcome",
    "run_tests", "run_tests_batch", "shutdown",
]
