"""Counterfactual cooperation (``v2`` rules): does main's program need the helper's ``aux``?

Reading main's code says whether it *calls* ``aux``; it cannot say whether the call does any work
(``n = aux(n)`` with an identity helper, ``_ = aux(n)``, a ``try`` that falls back to main's own code, a
call in a branch never taken). So when the joint program passes every hidden test and main calls
``aux``, the judge assembles further programs itself and runs the hidden tests on each, as ordinary
sandboxed runs whose pass or fail the judge decides:

1. **stand-ins**: the same program with ``aux`` replaced, after the helper's code and before main's,
   by each of :data:`STAND_INS` (one that raises, one returning a fresh ``object()``, ones returning
   its first argument, its last argument or its arguments as a tuple, and ones returning ``0``, ``1``,
   ``True``, ``False``, ``''``, ``None``, ``[]``);
2. **pairings**, on problems that specify ``aux`` (their rows ship ``reference_helper`` and
   ``reference_main``): main's code with the reference ``aux``, and the helper's code with the
   reference main;
3. **aux alone**: the helper's code with ``aux`` judged in place of the entry point.

Main **needs** the helper (``uses_helper`` is paid) only when every stand-in program fails at least
one hidden test and every pairing passes them all; ``beyond_wrapper`` is withheld when ``aux`` alone
passes every hidden test, however main spells its call. Stand-in runs get a time limit scaled from the
joint run's duration (:func:`scaled_config`); a run stopped at it counts as failing. Each run stops at
its first hidden test that does not pass (the rest are not run): only "all passed" matters. The outcome is
``infos[agent]["details"]["helper_dependence"]``; it never reaches an observation.

How they run (:func:`variant_requests`): the runs of a step are a sandbox request of variants
(``llm_coop_envs.sandbox.variants``), aux alone first, then the stand-ins, then the pairings; where a
step alone would leave a core idle, two requests side by side: aux alone and the stand-ins in one, the
pairings in the other (or, when no pairing is left to run, the stand-ins split in two). Each
variant is judged as a run of its own, every hidden test in a process of its own, forked from one
confined run, so no program sees another's state; what one can do to the others is end the request's
run early, which fails every later variant: with the pairings last, that only withholds the credit
(a stand-in or aux alone that fails is the direction a main can always take, by telling a stand-in
from ``aux``). A pairing whose program is the joint program itself (the reference pairs) is not run
again: it would repeat the joint run, which passed every hidden test (:func:`reused`). Once a
stand-in has timed out, the stand-ins after it in its request are not run and count as timed out: a
main that loops under every stand-in costs one stand-in's limit per step rather than twelve (its request
runs beside the pairings'). (So a main that times out under
one stand-in and would pass under a later one is paid as needing ``aux``; telling that stand-in from
``aux`` is already enough to fail on purpose.)

What the rule cannot see: on problems without an ``aux`` specification (HumanEval, MBPP,
CoopHumanEval) there is no pairing, so a main that *checks* ``aux`` on a value no stand-in returns
(``assert aux(3) == 4``) and then computes everything itself is paid as if it used ``aux``; and a
main that needs ``aux`` only on inputs the hidden tests never give is not paid. A main that tells a
stand-in from the helper's function by its other attributes (its docstring, say) can fail on purpose
under the stand-ins; main code that reads ``__code__``, ``inspect`` or the module's namespace already
earns no cooperation credit (:mod:`llm_coop_envs.coding.cooperation`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from llm_coop_envs.coding.agent_rewards import partner_reference
from llm_coop_envs.coding.parsing import ParsedReply, parse_reply
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.program import Program, build_program
from llm_coop_envs.coding.prompts import HELPER_NAME
from llm_coop_envs.sandbox import ExecutionResult, SandboxConfig

STAND_INS = {
    "raises": "raise RuntimeError('stand-in')",
    "object": "return object()",
    "first_argument": "return args[0] if args else next(iter(kwargs.values()), None)",
    "last_argument": "return args[-1] if args else None",
    "the_arguments": "return args",
    "zero": "return 0",
    "one": "return 1",
    "true": "return True",
    "false": "return False",
    "empty_string": "return ''",
    "none": "return None",
    "empty_list": "return []",
}
"""Functions that do no work for the problem: a main that passes with one of them does not need ``aux``.
The issue's ten, and two more identities (its last argument, its arguments as a tuple) so that an identity
helper routed through ``aux(0, x)`` or ``aux(x)[0]`` is no other spelling of the first one."""
PAIRINGS = ("main_with_reference_aux", "helper_with_reference_main")
ALONE = "aux_alone"
TIME_FACTOR = 3.0
"""A stand-in run may take this many times the joint run's duration (which forked a process for
every hidden test and passed them all) ..."""
MIN_TIME_S = 0.25
"""... but at least this long (a fork, the program's load and the tests' calls: a stand-in run that
passes makes as many as the joint run did), and never more than the env's own limits. The limit is wall
time, so this floor is also the margin against a busy machine: a stand-in that passes but is slowed past
its limit counts as failing and would pay the credit, so the reward would depend on the load (a 0.1 s
floor, tried, cut the looping main's cost by about half but left a fast program a margin of ~3x its
joint run). A looping main costs this limit per step (see :func:`variant_requests`)."""
ROUND_S = 0.25
"""Limits above :data:`MIN_TIME_S` are rounded up to a multiple of this, so that the runs of many
steps share a few batches."""

Job = tuple[str, list[str], str, str]


@dataclasses.dataclass(frozen=True)
class HelperDependence:
    """Whether main's program needs ``aux``, from the runs of the module docstring."""

    checked: bool = False
    """The runs were made (the joint program passed every hidden test and main calls ``aux``)."""
    needed: bool = False
    """Every stand-in program failed a hidden test and every pairing passed them all."""
    stand_ins: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Each stand-in's outcome: ``"passed"``, ``"failed"`` or ``"timeout"``."""
    pairings: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    """Each pairing that applies: whether it passed every hidden test."""
    aux_alone_passes: bool = False
    """``aux`` judged in place of the entry point passed every hidden test (a thin wrapper)."""

    def as_details(self) -> dict[str, Any]:
        return {"checked": self.checked, "needed": self.needed, "stand_ins": dict(self.stand_ins),
                "stand_ins_passed": [n for n, s in self.stand_ins.items() if s == "passed"],
                "pairings": dict(self.pairings), "aux_alone_passes": self.aux_alone_passes}


def solved_needing_helper(info: Mapping[str, Any]) -> bool | None:
    """Whether a step's verdict is a **helper-dependent solve**: every hidden test passed and the
    counterfactual found that main needs the helper's ``aux`` (``details["helper_dependence"]["needed"]``).
    None when the verdict has no counterfactual (rules before ``v2``, writing envs), so a table can say
    "not measured" rather than 0 %. The one reader of that outcome for eval, bench and demo tables."""
    details = info.get("details") if isinstance(info.get("details"), Mapping) else {}
    dependence = details.get("helper_dependence")
    if not isinstance(dependence, Mapping):  # older rules write None; writing envs have no such key
        return None
    return bool(info.get("solved", False)) and dependence.get("needed") is True


def stand_in_source(name: str) -> str:
    return f"def {HELPER_NAME}(*args, **kwargs):\n    {STAND_INS[name]}\n"


def dependence_jobs(problem: CodingProblem, program: Program, helper: ParsedReply,
                    main: ParsedReply) -> dict[str, Job | None]:
    """The runs of the module docstring by name; None for a pairing whose program cannot run."""
    tests = [t.source for t in problem.tests]
    entry, context = problem.entry_point, problem.context
    jobs: dict[str, Job | None] = {
        name: (_join(context, program.helper_code, stand_in_source(name), program.main_code), tests, entry, context)
        for name in STAND_INS}
    jobs[ALONE] = (_join(context, program.helper_code), tests, HELPER_NAME, context)
    # An agent's partner reference: main is paired with the reference helper, and the reverse.
    reference_helper, reference_main = partner_reference(problem.row, "main"), partner_reference(problem.row, "helper")
    if reference_helper is not None and reference_main is not None:
        jobs[PAIRINGS[0]] = _paired_job(problem, parse_reply(reference_helper), main, tests)
        jobs[PAIRINGS[1]] = _paired_job(problem, helper, parse_reply(reference_main), tests)
    return jobs


def joint_job(problem: CodingProblem, program: Program) -> Job:
    """The joint program's scoring run, as a job of :func:`dependence_jobs`."""
    return program.source, [t.source for t in problem.tests], problem.entry_point, problem.context


def reused(jobs: Mapping[str, Job | None], joint: Job, joint_result: ExecutionResult) -> dict[str, ExecutionResult]:
    """The runs that need not be made: a pairing whose program is the joint program itself (the
    reference pairs, or a reply equal to its reference) would rerun the joint run, which passed
    every hidden test, each in a process of its own: its result is the joint run's."""
    return {name: joint_result for name in PAIRINGS if jobs.get(name) == joint}


def variant_requests(jobs: Mapping[str, Job | None], done: Mapping[str, object],
                     parts: int = 1) -> list[tuple[list[str], tuple]]:
    """The runs still to make (not in ``done``) as sandbox requests of variants
    (``llm_coop_envs.sandbox.variants``: every test of every variant in a process of its own, forked
    from one confined run): for each request, its runs' names and its job (variants, tests, context,
    skip_after_timeout); none when no run is left. All share the problem's hidden tests and context.
    ``parts``: how many requests to split the runs into (consecutive, in the order below), so that
    idle cores can run them side by side; each is a run of its own. With more than one, the
    pairings, when any is left to run, get a request of their own (they run every hidden test,
    the others stop at their first failing one, so the two take about as long), and aux alone and
    every stand-in share the other.

    Their order: aux alone, the stand-ins, the pairings. A program that ends the request's run
    early (the only way one variant reaches another) makes every later variant fail: with the
    pairings last, that withholds the credit. Once a stand-in has timed out, the stand-ins after it
    are not run and count as timed out (failing, the direction a main can always take by telling a
    stand-in from ``aux``): a main that loops under every stand-in costs one stand-in's limit, not
    twelve. Aux alone and the pairings always run, each with its own limit. Requests of only
    pairings order nothing differently: a pairing that ends the run fails the pairing after it,
    which withholds the credit."""
    order = [ALONE, *STAND_INS, *PAIRINGS]
    names = [name for name in order if jobs.get(name) is not None and name not in done]
    pairings = [name for name in names if name in PAIRINGS]
    if parts > 1 and pairings and len(pairings) < len(names):
        # The pairings run every hidden test (they must pass them all) and the others stop at
        # their first failing one: two lanes of about the same length. Every stand-in is then in
        # one request, whose first time-out skips the rest, and no stand-in shares a request with
        # a pairing: a main that loops under the stand-ins (and so, likely, with the reference
        # aux) costs one limit per step, its two time-outs side by side rather than one after
        # the other.
        return [_request(jobs, names[:-len(pairings)]), _request(jobs, pairings)]
    size = math.ceil(len(names) / max(1, parts)) if names else 1
    return [_request(jobs, names[start:start + size]) for start in range(0, len(names), size)]


def _request(jobs: Mapping[str, Job | None], names: list[str]) -> tuple[list[str], tuple]:
    first = jobs[names[0]]
    stand_ins = [i for i, name in enumerate(names) if name in STAND_INS]
    skip = (stand_ins[0], stand_ins[-1] + 1) if stand_ins else None
    return names, ([(jobs[n][0], jobs[n][2]) for n in names], first[1], first[3], skip)


def decide(jobs: Mapping[str, Job | None], results: Mapping[str, ExecutionResult]) -> HelperDependence:
    """The dependence read from the results of :func:`dependence_jobs` (a missing job failed)."""
    stand_ins = {name: _outcome(results.get(name)) for name in STAND_INS}
    pairings = {name: _outcome(results.get(name)) == "passed" for name in PAIRINGS if name in jobs}
    needed = all(s != "passed" for s in stand_ins.values()) and all(pairings.values())
    return HelperDependence(True, needed, stand_ins, pairings, _outcome(results.get(ALONE)) == "passed")


def scaled_config(config: SandboxConfig, joint_duration_s: float) -> SandboxConfig:
    """The limits of a counterfactual run: a few times the joint run's, within the env's own."""
    scaled = TIME_FACTOR * joint_duration_s
    limit = min(config.timeout_s, MIN_TIME_S if scaled <= MIN_TIME_S else ROUND_S * math.ceil(scaled / ROUND_S))
    # Each run only asks whether every hidden test passes: it stops at the first that does not.
    return dataclasses.replace(config, timeout_s=limit, test_timeout_s=min(config.test_timeout_s, limit),
                               stop_at_failure=True)


def _paired_job(problem: CodingProblem, helper: ParsedReply, main: ParsedReply, tests: list[str]) -> Job | None:
    program = build_program(problem, helper, main, aux_only=True)
    if not program.main_defined or program.syntax is not None:
        return None
    return program.source, tests, problem.entry_point, problem.context


def _outcome(result: ExecutionResult | None) -> str:
    if result is None or result.status != "ok" and result.status != "timeout":
        return "failed"
    if result.tests and all(t.status == "passed" for t in result.tests):
        return "passed"
    stopped = result.status == "timeout" or any(t.status == "timeout" for t in result.tests)
    return "timeout" if stopped else "failed"


def _join(*sections: str) -> str:
    return "\n\n".join(s for s in sections if s.strip()) + "\n"
