"""A small HumanEval-style problem for reward tests: (a + b) * 2, four asserts."""

PROMPT = 'def add_then_double(a, b):\n    """Return (a + b) * 2.\n    >>> add_then_double(1, 2)\n    6\n    """\n'
TEST = (
    "def check(candidate):\n"
    "    assert candidate(1, 2) == 6\n"
    "    assert candidate(0, 0) == 0\n"
    "    assert candidate(-1, 1) == 0\n"
    "    assert candidate(2, 2) == 8\n"
)
ROW = {"task_id": "Toy/0", "prompt": PROMPT, "test": TEST, "entry_point": "add_then_double"}


def rows(n: int = 1) -> list[dict]:
    return [dict(ROW, task_id=f"Toy/{i}") for i in range(n)]


HELPER_SUM = "```python\ndef aux(a, b):\n    return a + b\n```"
HELPER_DOUBLE_SUM = "def aux(a, b):\n    return (a + b) * 2\n"
MAIN_USES = "def add_then_double(a, b):\n    s = aux(a, b)\n    return s * 2\n"
MAIN_WRAPS = 'def add_then_double(a, b):\n    """Doc."""\n    return aux(a, b)\n'
MAIN_IGNORES = "def add_then_double(a, b):\n    aux(a, b)\n    return (a + b) * 2\n"
MAIN_ALONE = "def add_then_double(a, b):\n    return (a + b) * 2\n"
