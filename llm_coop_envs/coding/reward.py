"""The coding rewards: ``"levels"`` (the default), ``"execution"``, or your own (see below).

Every coding env scores with these rewards. This text is their one description: the docs pages
show it as written here, and a test holds its numbers to the constants in this module.

## Reward ``"levels"`` (default)

The MAGRPO paper's hierarchical reward. Levels are scored in order; a failed level marked "stops"
ends the scoring. Every component is always present in ``infos[agent]["reward_components"]``
(0.0 when not reached). Maximum 4.0.

| level | condition | component | value |
| --- | --- | --- | --- |
| structure | the helper defines a function that returns a value (``return <expr>``) | ``helper_defined`` | +0.4 |
| structure | main defines the entry point; **missing: stops** | ``main_defined`` | +0.6 |
| syntax | the whole program compiles; **otherwise stops** | ``syntax`` | +0.5 |
| tests | passed tests / all tests | ``tests`` | 0 … +1.0 |
| cooperation | only when ≥ 1 test passes and the helper defined a function: main's code refers to a helper function (a call, or passing it as a value like ``key=aux``) | ``uses_helper`` | +0.5 |
| cooperation | … and the entry point is more than a thin wrapper: its body (docstring aside) is not just ``return aux(...)``, nor ``r = aux(...)`` then ``return r`` | ``beyond_wrapper`` | +1.0 |
| cooperation | … but every helper call in main is a bare statement whose value is thrown away | ``ignored_return`` | −0.5 |

"Helper function" means any function the helper agent defined (other than the entry point); the
prompts ask for one named ``aux``. The cooperation facts are read from the syntax tree of main's
code; nothing about them is executed. With ``team="single"`` (one agent writes everything) the
levels keep ``main_defined``, ``syntax`` and ``tests`` only (maximum 2.1): there is no helper.

Examples on a problem "return (a + b) * 2" with four asserts:

| helper | main | total |
| --- | --- | --- |
| ``aux(a, b) = a + b`` | ``return aux(a, b) * 2`` | 4.0 |
| ``aux(a, b) = (a + b) * 2`` | ``return aux(a, b)`` (thin wrapper) | 3.0 |
| ``aux(a, b) = a + b`` | ``aux(a, b)`` then ``return (a + b) * 2`` (ignores the value) | 3.5 |
| ``aux(a, b) = a + b`` | ``return (a + b) * 2`` (no call) | 2.5 |
| (no function) | correct on its own | 2.1 |
| ``aux(a, b) = a + b`` | ``return a + b`` (2 of 4 asserts pass, no call) | 2.0 |
| ``aux(a, b) = a + b`` | a syntax error | 1.0 |
| ``aux(a, b) = a + b`` | prose only | 0.4 |

### The ``v0`` and ``v1`` rules

Those numbers are the ``v0`` rules. Every ``-v1`` coding env (and ``coop_procedural-v0``) scores with
the ``v1`` rules (:mod:`llm_coop_envs.coding.rules`): the tests are the problem's **hidden** tests, and
``helper_defined`` and the three cooperation components pay only when **every** hidden test passes.
So cooperation never outbids correctness: a reply that passes every test scores at least 2.1 (2.5 with
a helper function), one that fails a test at most 1.1 + the share it passes (< 2.1), and among replies
that pass the same tests, the one that really uses the helper scores higher. The same examples under ``v1``:

| helper | main | total |
| --- | --- | --- |
| ``aux(a, b) = a + b`` | ``return aux(a, b) * 2`` | 4.0 |
| ``aux(a, b) = a + b`` | ``return (a + b) * 2`` (no call) | 2.5 |
| (no function) | correct on its own | 2.1 |
| ``aux(a, b) = a + b`` | ``return aux(a, b) + 1`` (calls aux, 0 of 4 pass) | 1.1 |
| ``aux(a, b) = a + b`` | ``return a + b`` (2 of 4 pass, no call) | 1.6 |
| ``aux(a, b) = a + b`` | a syntax error | 0.6 |
| ``aux(a, b) = a + b`` | prose only | 0.0 |

### Which calls count

**Real use only** (every version): main "refers to a helper function" only when its entry point, in
code that can run, calls a helper function (or passes it to a call, ``map(aux, xs)``, ``key=aux``) by a
name that nothing in main rebinds: not a parameter, a local, a nested ``def``, a ``global`` declaration
or a comprehension variable; dead code (after ``return``, under ``if False:``, in a nested function or
lambda nothing calls) does not count, nor does a bare ``aux`` statement; calls through main's own
top-level functions that the entry point calls do. Main's top-level code that rebinds a helper's name
(``aux = ...``, ``class aux``, ``import ... as aux``, ``def aux``) is dropped from the program and reported
in ``dropped_from_main``, and main code that reaches the module's namespace dynamically (``globals()``,
``vars()``, ``setattr``, ``exec``, ``eval``, ``sys.modules``, ``__dict__``) earns no cooperation credit.

**Needed use only** (``v2``: every ``-v2`` coding env and ``coop_procedural-v1``): reading the code
says whether main *calls* ``aux``, not whether the call does any work. Under ``v2`` only ``aux`` (the
function the prompts ask for) is the helper's function, and once the joint program passes every hidden
test the judge runs the hidden tests on programs it assembles itself
(:mod:`llm_coop_envs.coding.dependence`): ``aux`` replaced by twelve stand-ins (one that raises, a fresh
``object()``, its first argument, its last argument, its arguments as a tuple, ``0``, ``1``, ``True``,
``False``, ``''``, ``None``, ``[]``), and, on
problems that specify ``aux``, main's code with the reference ``aux`` and the helper's code with the
reference main. ``uses_helper`` (and with it ``beyond_wrapper``) is paid only when every stand-in
program fails a hidden test and every pairing passes them all; ``beyond_wrapper`` is withheld when
``aux`` alone, judged in place of the entry point, passes every hidden test. A helper definition that
shadows a builtin or standard-library name the program uses is dropped (``dropped_shadowing``). The
outcome is ``infos[agent]["details"]["helper_dependence"]``. The same examples under ``v2``:

| helper | main | total |
| --- | --- | --- |
| ``aux(a, b) = a + b`` | ``return aux(a, b) * 2`` | 4.0 |
| ``aux(v) = v`` (identity) | ``a = aux(a)`` then ``return (a + b) * 2`` | 2.5 |
| ``aux(a, b) = a + b`` | ``_ = aux(a, b)`` then ``return (a + b) * 2`` | 2.5 |
| ``aux(a, b) = (a + b) * 2`` | ``return aux(a, b) if True else None`` (a wrapper however spelt) | 3.0 |

What it cannot see: on problems without an ``aux`` specification (HumanEval, MBPP, CoopHumanEval)
there is no pairing, so a main that only *checks* ``aux`` on a value no stand-in returns
(``assert aux(3) == 5``) and then computes everything itself is paid as a real use; and a use that only
matters on inputs the hidden tests never give is not paid.

## Reward ``"execution"``

| condition | component | value |
| --- | --- | --- |
| the program compiles and main defines the entry point | ``syntax`` | +0.2 |
| the program loads without error | ``runs`` | +0.3 |
| each passing test | ``tests`` | +0.1 |
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llm_coop_envs.coding.cooperation import HelperUse
from llm_coop_envs.coding.dependence import HelperDependence
from llm_coop_envs.coding.parsing import ParsedReply
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.program import Program
from llm_coop_envs.coding.rules import RULES, ScoringRules
from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.reward_fns import resolve_reward as resolve_reward_spec
from llm_coop_envs.sandbox import ExecutionResult

HELPER_DEFINED = 0.4
MAIN_DEFINED = 0.6
SYNTAX = 0.5
TESTS = 1.0
USES_HELPER = 0.5
BEYOND_WRAPPER = 1.0
IGNORED_RETURN = -0.5

EXECUTION_SYNTAX = 0.2
EXECUTION_RUNS = 0.3
EXECUTION_PER_TEST = 0.1

SOLO_LEVEL_COMPONENTS = ("main_defined", "syntax", "tests")
LEVEL_COMPONENTS = ("helper_defined", "main_defined", "syntax", "tests", "uses_helper", "beyond_wrapper", "ignored_return")
EXECUTION_COMPONENTS = ("syntax", "runs", "tests")
REWARD_NAMES = ("levels", "execution")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Everything a reward function may look at for one joint reply."""

    problem: CodingProblem
    helper_reply: str
    main_reply: str
    program: Program
    result: ExecutionResult | None
    """The sandbox run; None when it did not run (main missing or a syntax error)."""
    helper_use: HelperUse
    helper_parse: ParsedReply
    main_parse: ParsedReply
    rules: ScoringRules = RULES["v0"]
    public_result: ExecutionResult | None = None
    """Under ``v2`` rules the public tests' own run (None when nothing public ran); else None."""
    dependence: HelperDependence | None = None
    """Under ``v2`` rules whether main needs ``aux`` (:mod:`llm_coop_envs.coding.dependence`)."""

    @property
    def public_outcomes(self) -> tuple:
        """The public tests' outcomes, from their own run or after the scoring ones."""
        if self.rules.silent_hidden:
            return () if self.public_result is None else self.public_result.tests
        return () if self.result is None else self.result.tests[len(self.problem.tests):]

    @property
    def needs_dependence_check(self) -> bool:
        """The counterfactual runs apply: ``v2``, every hidden test passed and main calls ``aux``."""
        return (self.rules.counterfactual and self.all_passed and self.helper_use.calls_helper
                and bool(self.program.helper_functions))

    @property
    def passed(self) -> int:
        """Scoring tests passed (public tests run after them and never count)."""
        if self.result is None:
            return 0
        return sum(o.status == "passed" for o in self.result.tests[: len(self.problem.tests)])

    @property
    def scoring_result(self) -> ExecutionResult | None:
        """The sandbox run with the outcomes of the scoring tests only (public ones left out)."""
        if self.result is None:
            return None
        return dataclasses.replace(self.result, tests=self.result.tests[: len(self.problem.tests)])

    @property
    def all_passed(self) -> bool:
        return bool(self.problem.tests) and self.passed == len(self.problem.tests)

    @property
    def pass_fraction(self) -> float:
        return self.passed / len(self.problem.tests) if self.problem.tests else 0.0


RewardFunction = Callable[[Verdict], RewardResult]


def levels_reward(verdict: Verdict) -> RewardResult:
    """The hierarchical reward of the table above."""
    program = verdict.program
    scores = dict.fromkeys(LEVEL_COMPONENTS, 0.0)
    gated = verdict.rules.gated_cooperation
    if program.helper_returns and not gated:
        scores["helper_defined"] = HELPER_DEFINED
    if not program.main_defined:
        return RewardResult.from_components(scores)
    scores["main_defined"] = MAIN_DEFINED
    if program.syntax is not None:
        return RewardResult.from_components(scores)
    scores["syntax"] = SYNTAX
    scores["tests"] = TESTS * verdict.pass_fraction
    if gated and not verdict.all_passed:
        return RewardResult.from_components(scores)  # cooperation never outbids correctness
    if gated and program.helper_returns:
        scores["helper_defined"] = HELPER_DEFINED
    use = verdict.helper_use
    if verdict.passed >= 1 and program.helper_functions and use.calls_helper and _needed(verdict):
        wrapper = use.thin_wrapper or (verdict.dependence is not None and verdict.dependence.aux_alone_passes)
        scores["uses_helper"] = USES_HELPER
        scores["beyond_wrapper"] = 0.0 if wrapper else BEYOND_WRAPPER
        scores["ignored_return"] = IGNORED_RETURN if use.ignores_return else 0.0
    return RewardResult.from_components(scores)


def _needed(verdict: Verdict) -> bool:
    """Under counterfactual rules main's program must need ``aux``; otherwise reading the code decides."""
    if not verdict.rules.counterfactual:
        return True
    return verdict.dependence is not None and verdict.dependence.needed


def solo_levels_reward(verdict: Verdict) -> RewardResult:
    """``levels`` for a one-agent team: the structure, syntax and test levels of main alone."""
    scores = levels_reward(verdict).components
    return RewardResult.from_components({name: scores[name] for name in SOLO_LEVEL_COMPONENTS})


def execution_reward(verdict: Verdict) -> RewardResult:
    """Plain execution reward: compiles, runs, and 0.1 per passing test."""
    program = verdict.program
    scores = dict.fromkeys(EXECUTION_COMPONENTS, 0.0)
    if program.syntax is None and program.main_defined:
        scores["syntax"] = EXECUTION_SYNTAX
    if verdict.result is not None and verdict.result.status == "ok":
        scores["runs"] = EXECUTION_RUNS
    scores["tests"] = EXECUTION_PER_TEST * verdict.passed
    return RewardResult.from_components(scores)


class CodingReward:
    """A coding task's ``reward=``, resolved by :func:`llm_coop_envs.core.reward_fns.resolve_reward`:
    scores verdicts, many at once (a batched reward function is called once for all of them)."""

    def __init__(self, spec: Any, team: str = "pair") -> None:
        single = team == "single"
        self.agents = ("main",) if single else ("helper", "main")
        self._bundled = {"levels": solo_levels_reward if single else levels_reward, "execution": execution_reward}
        components = {"levels": SOLO_LEVEL_COMPONENTS if single else LEVEL_COMPONENTS, "execution": EXECUTION_COMPONENTS}
        self.combined = resolve_reward_spec(spec, components)

    def score_many(self, verdicts: Sequence[Verdict],
                   judgements: Sequence[Mapping[str, Any]]) -> list[RewardResult]:
        """The reward of each verdict; ``judgements`` (:mod:`llm_coop_envs.coding.judgement`, one per
        verdict) are the reward functions' contexts."""
        name = self.combined.bundled
        bundled = [self._bundled[name](v) for v in verdicts] if name is not None else None
        if self.combined.is_bundled_only:
            return bundled  # type: ignore[return-value]
        replies = [{"helper": v.helper_reply, "main": v.main_reply} for v in verdicts]
        replies = [{agent: r[agent] for agent in self.agents} for r in replies]
        return self.combined.combine(bundled, replies, judgements)


def resolve_reward(spec: Any, team: str = "pair") -> CodingReward:
    """``"levels"``, ``"execution"``, a function ``f(replies, context)`` or a weighted list of them."""
    return CodingReward(spec, team)
