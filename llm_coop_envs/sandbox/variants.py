"""run_variants: several programs on the same tests in one sandbox request, each judged as a run of
its own (the coding envs' counterfactual runs; the inside: inside/_variants.py).

A request per program pays, for each, a run's confined process (its mount namespace and tmpfs,
made and torn down) and a round trip; here one run's first process forks every test's child of
every variant, as an isolated run forks one per test (``isolate_tests`` always holds). Each
variant's result is what ``run_tests`` of that program would give, with its own ``timeout_s``;
``budget_s`` bounds the whole request: a variant still running at it is stopped (``timeout``),
and the variants after it are not started (``timeout``, every test ``not_run``). A job's optional
fourth item, ``skip_after_timeout`` ((start, stop) of its variants' indices): once one of those
variants has timed out, the rest of them are not started either (``timeout``). Output
(``stdout``, ``stderr``) is the run's, not a variant's: variant results carry none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from llm_coop_envs.sandbox import api, outcome
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.batch import Request, run_batch
from llm_coop_envs.sandbox.config import SandboxConfig
from llm_coop_envs.sandbox.inside import _compiled, _protocol
from llm_coop_envs.sandbox.result import ExecutionResult, failure, not_run

Variant = tuple[str, "str | None"]  # (program, entry_point)
VariantsJob = tuple  # (variants, tests, context[, skip_after_timeout])
MAX_VARIANTS = 1 << 16  # the index travels in two bytes (_isolated.INDEX)


def encode_variants(variants: Sequence[Variant], tests: Sequence[str], config: SandboxConfig,
                    context: str = "", budget_s: float | None = None,
                    skip_after_timeout: tuple[int, int] | None = None) -> bytes:
    """Two frames, as api.encode_request: the programs (read by the run's child), then what only
    the judge reads (the tests, compiled once per process, and the trusted context)."""
    limits = {**config.limits(), "isolate_tests": True, "budget_s": budget_s,
              "skip_after_timeout": list(skip_after_timeout) if skip_after_timeout else None}
    run = {"program": "", "entry_point": None, "limits": limits,
           "variants": [{"program": p, "entry_point": e} for p, e in variants]}
    tests = list(tests)
    return _protocol.encode(run) + _protocol.encode(
        {"tests": tests, "context": context, "compiled": _compiled.pack_suite(tests)})


def _prepare(config: SandboxConfig, backend: str, budget_s: float | None):
    def prepare(job: VariantsJob) -> Request | list[ExecutionResult]:
        variants, tests, context = list(job[0]), list(job[1]), job[2]
        skip = job[3] if len(job) > 3 else None
        if not 0 < len(variants) <= MAX_VARIANTS:
            raise ValueError(f"{len(variants)} variants: use 1 to {MAX_VARIANTS}")
        rejected = [api.reject(p, tests, e, config, context) for p, e in variants]
        if any(r is not None for r in rejected):  # as run_tests would answer each; none runs
            return [r or failure("error", len(tests), "ProgramTooLarge", "another variant was rejected")
                    for r in rejected]
        limit = len(variants) * config.timeout_s if budget_s is None else min(
            budget_s, len(variants) * config.timeout_s)
        return Request(encode_variants(variants, tests, config, context, budget_s, skip), limit,
                       lambda facts, isolation: build(facts, len(variants), len(tests), config,
                                                      backend, isolation),
                       lambda why: [failure("crashed", len(tests), "SandboxError", why, backend=backend)
                                    for _ in variants])
    return prepare


def build(facts: dict, n_variants: int, n_tests: int, config: SandboxConfig, backend: str,
          isolation: tuple[str, ...]) -> list[ExecutionResult]:
    """Each variant's result from its facts; a variant the run never started timed out (its
    request's budget was spent before it) unless the run itself failed first."""
    found = facts.get("variants") if isinstance(facts.get("variants"), list) else []
    results = []
    for index in range(n_variants):
        one = found[index] if index < len(found) and isinstance(found[index], dict) else None
        if one is None:  # past the request's budget, or skipped after a timeout
            results.append(ExecutionResult("timeout", not_run(n_tests), "TimeoutError",
                                           "not started: the request's time was spent",
                                           backend=backend, isolation=isolation))
            continue
        result = outcome.build(one, n_tests, config.timeout_s, config.test_timeout_s, backend, isolation)
        results.append(dataclasses.replace(result, stdout="", stderr=""))
    return results


def run_variants_batch(jobs: Sequence[VariantsJob], config: SandboxConfig | None = None,
                       budget_s: float | None = None, workers: int | None = None,
                       ) -> list[list[ExecutionResult]]:
    """For each (variants, tests, context[, skip_after_timeout]) job, one request: a result per (program, entry_point)
    variant, in order, each as run_tests(program, tests, entry_point, config, context=context)
    with ``isolate_tests`` would judge it. ``budget_s``: the most one request may take."""
    config = config or api.DEFAULT_CONFIG
    backend = backends.resolve(config.backend)
    return run_batch(list(jobs), _prepare(config, backend, budget_s), config, workers)


def run_variants(variants: Sequence[Variant], tests: Sequence[str], config: SandboxConfig | None = None,
                 *, context: str = "", budget_s: float | None = None) -> list[ExecutionResult]:
    """One request (see run_variants_batch)."""
    return run_variants_batch([(variants, tests, context)], config, budget_s, workers=1)[0]
