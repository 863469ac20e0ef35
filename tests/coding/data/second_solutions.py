"""Second correct solutions of the HumanEval problems whose tests are property checks.

The rewritten HumanEval tests (``llm_coop_envs.coding.reference_tests``) take exact expected values
from the canonical solution, and keep property checks as they are: tolerances (2, 4), checks through
a prompt-defined inverse (32 through ``poly``, 38 through ``encode_cyclic``, 50 through
``encode_shift``), loops over computed or random inputs (44, 53), truthiness (52, 56, 61) and
``is True`` / ``is False`` (72). HumanEval/33, whose expected values called the entry point by name,
is here too. Each solution below is correct and differs from the canonical one (another algorithm
or another formulation), so a test can show that such checks accept any correct program, not only
the reference's exact output.
"""

SECOND_SOLUTIONS = {
    # tolerance: abs(candidate(x) - value) < 1e-6
    "HumanEval/2": '''def truncate_number(number: float) -> float:
    return number - int(number)
''',
    "HumanEval/4": '''import statistics
from typing import List


def mean_absolute_deviation(numbers: List[float]) -> float:
    centre = statistics.fmean(numbers)
    return statistics.fmean(abs(x - centre) for x in numbers)
''',
    # inverse: poly(coeffs, candidate(coeffs)) is near zero; a bracket from Cauchy's bound on the
    # roots, then Newton steps that fall back to bisection when they leave the bracket.
    "HumanEval/32": '''def find_zero(xs: list):
    def value(x):
        total = 0.0
        for coeff in reversed(xs):
            total = total * x + coeff
        return total

    def slope(x):
        total = 0.0
        for power in range(len(xs) - 1, 0, -1):
            total = total * x + power * xs[power]
        return total

    lead = next(c for c in reversed(xs) if c != 0)
    bound = 1.0 + max(abs(c / lead) for c in xs)
    low, high = -bound, bound
    if value(low) > 0:
        low, high = high, low
    x = 0.0
    for _ in range(200):
        fx = value(x)
        if abs(fx) < 1e-12:
            break
        if fx < 0:
            low = x
        else:
            high = x
        d = slope(x)
        step = x - fx / d if d else None
        inside = step is not None and min(low, high) < step < max(low, high)
        x = step if inside else (low + high) / 2.0
    return x
''',
    # inverse: candidate(encode_cyclic(s)) == s; undo each group's rotation directly
    "HumanEval/38": '''def decode_cyclic(s: str):
    out = []
    for start in range(0, len(s), 3):
        group = s[start:start + 3]
        out.append(group[-1] + group[:-1] if len(group) == 3 else group)
    return "".join(out)
''',
    # loop: candidate(x, x + 1) == str(x)
    "HumanEval/44": '''def change_base(x: int, base: int):
    if x < base:
        return str(x)
    return change_base(x // base, base) + str(x % base)
''',
    # inverse: candidate(encode_shift(s)) == s; a translation table instead of arithmetic per letter
    "HumanEval/50": '''import string


def decode_shift(s: str):
    letters = string.ascii_lowercase
    return s.translate(str.maketrans(letters, letters[-5:] + letters[:-5]))
''',
    # truthiness: assert candidate(...) / assert not candidate(...)
    "HumanEval/52": '''def below_threshold(l: list, t: int):
    return all(x < t for x in l)
''',
    # loop over random inputs: candidate(x, y) == x + y
    "HumanEval/53": '''def add(x: int, y: int):
    return sum((x, y))
''',
    "HumanEval/56": '''def correct_bracketing(brackets: str):
    while "<>" in brackets:
        brackets = brackets.replace("<>", "")
    return brackets == ""
''',
    "HumanEval/61": '''def correct_bracketing(brackets: str):
    while "()" in brackets:
        brackets = brackets.replace("()", "")
    return not brackets
''',
    # identity: assert candidate(...) is True
    "HumanEval/72": '''def will_it_fly(q, w):
    return q == q[::-1] and sum(q) <= w
''',
    # its expected values called the entry point by name; now literals from the reference
    "HumanEval/33": '''def sort_third(l: list):
    thirds = sorted(l[0::3])
    return [thirds[i // 3] if i % 3 == 0 else v for i, v in enumerate(l)]
''',
}
