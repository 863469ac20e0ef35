"""The scoring rules of each coding env version: what scores a reply, and what feedback may show.

A reward change that alters honest scores ships as a new env version, so the rules are named by the
version that introduced them and every coding env says which it uses:

| rule | ``v0`` | ``v1`` | ``v2`` |
| --- | --- | --- | --- |
| scoring tests | every assert of the problem | the **hidden** asserts only (public ones are for feedback) | as ``v1``, and every scored problem has a hidden test that is not a prompt example (``Input:``/``Output:`` and ``f(x) ==> y`` examples recognised; written inputs where a problem had none) |
| expected values | as the dataset wrote them | computed from the trusted reference where the dataset has one; MBPP's broken conversions repaired | as ``v1`` |
| cooperation levels (and ``helper_defined``) | paid when ≥ 1 test passes | paid only when **every** scoring test passes | as ``v1``, and only when the hidden tests show that main **needs** the helper's ``aux`` (counterfactual runs, :mod:`llm_coop_envs.coding.dependence`); only ``aux`` is the helper's function |
| feedback on failed tests | quotes the failing asserts, expected values included | quotes failing **public** asserts only; hidden ones are counted by error type | **public tests only**, run in a process of their own, with one of three verdicts; nothing about hidden tests, no identifier an agent chose |
| how tests run | one process runs the program, then every test in order | as ``v0`` | each test in a **child of its own**, forked before any of the program's code ran, with an emptied scratch folder: state kept between tests (a counter, a file, a replaced builtin) cannot change a later test |

What does not change an honest score applies to every version: cooperation credit only for a real
call of the helper's function, main's top-level rebinding of a helper's name dropped, and feedback
made only of judge-made text (no message a program chose).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ScoringRules:
    name: str
    hidden_tests: bool
    """Score on hidden tests only; public tests (docstring examples, a declared subset) feed back."""
    reference_expected: bool
    """Expected values from the trusted reference (and repaired dataset conversions)."""
    gated_cooperation: bool
    """Helper levels pay only when every scoring test passes: cooperation never outbids correctness."""
    counterfactual: bool = False
    """Cooperation credit only when main's program fails with ``aux`` replaced by stand-ins; only
    ``aux`` is the helper's function; helper definitions shadowing builtins main uses are dropped."""
    silent_hidden: bool = False
    """Feedback from public tests only (their own run, three verdicts); hidden tests never speak."""
    example_free_hidden: bool = False
    """Every scored problem has a hidden test that is not a prompt example (:mod:`.extra_hidden`)."""
    test_per_child: bool = False
    """Each test runs in a child of its own, which runs the program afresh
    (``SandboxConfig.isolate_tests``): no state one test's run leaves reaches another."""


RULES = {
    "v0": ScoringRules("v0", hidden_tests=False, reference_expected=False, gated_cooperation=False),
    "v1": ScoringRules("v1", hidden_tests=True, reference_expected=True, gated_cooperation=True),
    "v2": ScoringRules("v2", hidden_tests=True, reference_expected=True, gated_cooperation=True,
                       counterfactual=True, silent_hidden=True, example_free_hidden=True,
                       test_per_child=True),
}


def scoring_rules(rules: str | ScoringRules) -> ScoringRules:
    if isinstance(rules, ScoringRules):
        return rules
    if rules not in RULES:
        raise ValueError(f"rules must be one of {tuple(RULES)}, got {rules!r}.")
    return RULES[rules]
