"""The scoring rules of each coding env version: what scores a reply, and what feedback may show.

A reward change that alters honest scores ships as a new env version, so the rules are named by the
version that introduced them and every coding env says which it uses:

| rule | ``v0`` | ``v1`` |
| --- | --- | --- |
| scoring tests | every assert of the problem | the **hidden** asserts only (public ones are for feedback) |
| expected values | as the dataset wrote them | computed from the trusted reference where the dataset has one; MBPP's broken conversions repaired |
| cooperation levels (and ``helper_defined``) | paid when ≥ 1 test passes | paid only when **every** scoring test passes |
| feedback on failed tests | quotes the failing asserts, expected values included | quotes failing **public** asserts only; hidden ones are counted by error type |

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


RULES = {
    "v0": ScoringRules("v0", hidden_tests=False, reference_expected=False, gated_cooperation=False),
    "v1": ScoringRules("v1", hidden_tests=True, reference_expected=True, gated_cooperation=True),
}


def scoring_rules(rules: str | ScoringRules) -> ScoringRules:
    if isinstance(rules, ScoringRules):
        return rules
    if rules not in RULES:
        raise ValueError(f"rules must be one of {tuple(RULES)}, got {rules!r}.")
    return RULES[rules]
