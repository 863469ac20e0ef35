"""The scheme classifier on hand-written joint replies, one or more per scheme."""

import textwrap

import pytest

from benchmarks.metrics import SCHEMES, analyze_cooperation, classify_scheme, cooperation_rate, scheme_distribution

HELPER_PRIME = """
def is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, int(n ** 0.5) + 1))
"""

HELPER_SORT = """
def aux(values):
    return sorted(values)
"""

EXAMPLES = {
    "fallback": [
        (HELPER_SORT, """
def median(l):
    try:
        s = aux(l)
    except Exception:
        s = list(l)
        s.sort()
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
"""),
        (HELPER_SORT, """
def median(l):
    s = aux(l)
    if s is None:
        s = []
        for v in l:
            s.append(v)
        s.sort()
    return s[len(s) // 2]
"""),
        (HELPER_SORT, """
def median(l):
    s = aux(l)
    if s is not None:
        return s[len(s) // 2]
    copy = list(l)
    copy.sort()
    return copy[len(copy) // 2]
"""),
        (HELPER_SORT, """
def median(l):
    s = aux(l) or sorted(list(l))
    return s[len(s) // 2]
"""),
    ],
    "decorator": [
        (HELPER_SORT, """
def median(l):
    if not l:
        return None
    s = aux(l)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
"""),
        (HELPER_PRIME, """
def prime_length(string):
    \"\"\"True when the length is prime.\"\"\"
    return is_prime(len(string.strip()))
"""),
    ],
    "coordinator": [
        (HELPER_PRIME, """
def count_primes(numbers):
    total = 0
    for x in numbers:
        total += int(is_prime(x))
    return total
"""),
        (HELPER_PRIME, """
def count_primes(numbers):
    return sum(is_prime(x) for x in numbers)
"""),
        (HELPER_SORT, """
def merge_halves(l):
    half = len(l) // 2
    return aux(l[:half]) + aux(l[half:])
"""),
    ],
    "strategy_filter": [
        (HELPER_PRIME, """
def x_or_y(n, x, y):
    if is_prime(n):
        return x
    return y
"""),
        (HELPER_PRIME, """
def primes_only(numbers):
    return [x for x in numbers if is_prime(x)]
"""),
        (HELPER_PRIME, """
def x_or_y(n, x, y):
    prime = is_prime(n)
    return x if prime else y
"""),
    ],
    "thin_wrapper": [
        (HELPER_PRIME, """
def check(n):
    \"\"\"Docstring only.\"\"\"
    return is_prime(n)
"""),
        (HELPER_PRIME, """
def check(n):
    result = is_prime(n)
    return result
"""),
    ],
    "none": [
        (HELPER_PRIME, """
def check(n):
    return n > 1 and all(n % d for d in range(2, n))
"""),
        (HELPER_PRIME, """
def check(n):
    is_prime(n)
    return n > 1
"""),
        (HELPER_PRIME, """
def is_prime(n):
    return n == 2

def check(n):
    return is_prime(n)
"""),
        ("", "def check(n):\n    return True\n"),
        (HELPER_PRIME, "def check(n:\n    return"),
        ("def broken(:\n", "def check(n):\n    return broken(n)\n"),
    ],
}

CASES = [(scheme, i, helper, main) for scheme, pairs in EXAMPLES.items() for i, (helper, main) in enumerate(pairs)]


@pytest.mark.parametrize(("scheme", "index", "helper", "main"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_hand_written_examples(scheme, index, helper, main):
    assert classify_scheme(textwrap.dedent(helper), textwrap.dedent(main)) == scheme


def test_every_scheme_has_examples():
    assert set(EXAMPLES) == set(SCHEMES)


def test_analysis_fields():
    analysis = analyze_cooperation(HELPER_PRIME, "def check(n):\n    is_prime(n)\n    return 1\n")
    assert (analysis.calls_helper, analysis.uses_result, analysis.cooperates) == (True, False, False)
    assert analysis.helper_functions == ("is_prime",)
    shadowed = analyze_cooperation(HELPER_PRIME, "def is_prime(n):\n    return 1\n\ndef f(n):\n    return is_prime(n)\n")
    assert shadowed.helper_functions == () and not shadowed.cooperates
    broken = analyze_cooperation(HELPER_PRIME, "def f(:")
    assert broken.error.startswith("main: SyntaxError")


def test_entry_point_and_calls_through_main_functions():
    main = """
def _inner(n):
    return is_prime(n) and n > 10

def big_prime(n):
    return _inner(n)
"""
    analysis = analyze_cooperation(HELPER_PRIME, main, entry_point="big_prime")
    assert analysis.cooperates
    assert not analyze_cooperation(HELPER_PRIME, "def unrelated():\n    return 1\n" + main, "unrelated").cooperates


def test_rate_and_distribution():
    analyses = [analyze_cooperation(HELPER_PRIME, "def f(n):\n    return is_prime(n)\n"), analyze_cooperation("", "")]
    assert cooperation_rate(analyses) == 0.5
    assert cooperation_rate([]) is None
    distribution = scheme_distribution(["fallback", "fallback", "none", "decorator"])
    assert distribution["fallback"] == 0.5 and distribution["coordinator"] == 0.0
    assert set(distribution) == set(SCHEMES)


@pytest.mark.parametrize("junk", ["", "\x00", "(" * 500, "def f():\n" + "  " * 10_000 + "pass", "é" * 1000])
def test_junk_never_raises(junk):
    assert classify_scheme(junk, junk) in SCHEMES
