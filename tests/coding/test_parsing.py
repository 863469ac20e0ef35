"""Reply parsing: the forms models write, and junk that must neither crash nor hang."""


import pytest

from llm_coop_envs.coding.parsing import parse_reply


def kinds(reply):
    return [(p.kind, p.name) for p in parse_reply(reply).pieces]


def test_fenced_block_with_prose_around():
    parsed = parse_reply("Here you go:\n```python\ndef aux(x):\n    return x + 1\n```\nThis adds one.")
    assert parsed.origin == "fenced"
    assert kinds("Sure:\n```python\ndef aux(x):\n    return x + 1\n```\nDone.") == [("function", "aux")]


def test_bare_code():
    parsed = parse_reply("def aux(x):\n    return x\n")
    assert parsed.origin == "bare"
    assert parsed.functions()["aux"].has_return


def test_prose_between_functions_and_a_docstring_at_column_zero():
    reply = (
        "Sure! Here is the code.\n\ndef aux(x):\n    '''doc\nstring at column 0\n'''\n    return x\n\n"
        "This function returns x.\n\ndef main(y):\n    return aux(y)\n\nprint(main(3))"
    )
    parsed = parse_reply(reply)
    assert [(p.kind, p.name) for p in parsed.pieces] == [("function", "aux"), ("function", "main")]
    assert "prose" in parsed.dropped and "a top-level call" in parsed.dropped


def test_several_functions_imports_and_constants_are_kept_calls_dropped():
    reply = (
        "import math\nfrom typing import List\nMOD = 10**9 + 7\n\n@staticmethod\ndef a(x):\n    return x\n\n"
        "def b(y):\n    return a(y)\n\nresult = b(3)\nif __name__ == '__main__':\n    print(result)\n"
    )
    assert kinds(reply) == [("import", None), ("import", None), ("assign", None), ("function", "a"), ("function", "b")]
    assert "@staticmethod" in parse_reply(reply).functions()["a"].source
    assert "a __main__ block" in parse_reply(reply).dropped


def test_several_fenced_blocks_are_joined_and_other_languages_skipped():
    reply = "```bash\npip install x\n```\n```python\ndef a():\n    return 1\n```\ntext\n```py\ndef b():\n    return 2\n```"
    assert kinds(reply) == [("function", "a"), ("function", "b")]


def test_code_outside_fences_when_fences_hold_only_examples():
    reply = "def aux(x):\n    return x\n\nExample:\n```\n>>> aux(1)\n1\n```"
    assert kinds(reply) == [("function", "aux")]


def test_unclosed_fence_keeps_what_was_written():
    assert kinds("```python\ndef aux(x):\n    return 1") == [("function", "aux")]


def test_broken_function_is_kept_as_broken_code_next_to_good_ones():
    parsed = parse_reply("def aux(x):\n    return x +\n\ndef f(y):\n    return y")
    assert [(p.kind, p.name) for p in parsed.pieces] == [("broken", "aux"), ("function", "f")]


def test_signature_split_at_column_zero_is_rejoined():
    assert kinds("def f(\na, b\n):\n    return a") == [("function", "f")]


def test_indented_reply_is_dedented_and_nul_bytes_removed():
    assert kinds("    def aux(x):\n        return 3\n") == [("function", "aux")]
    assert kinds("def a\x00ux(x):\n    return 2") == [("function", "aux")]


def test_function_without_return_value():
    assert not parse_reply("def aux(x):\n    print(x)\n    return\n").functions()["aux"].has_return
    nested_only = "def aux(x):\n    def inner():\n        return 1\n    inner()\n"
    assert not parse_reply(nested_only).functions()["aux"].has_return


JUNK = [
    "",
    " \n\t ",
    "x" * 200_000,
    "\x00\x01\xff" * 1000,
    "(" * 100_000,
    "-" * 100_000 + "1",
    "def f(:\n" * 20_000,
    "'''" * 50_000,
    "```\n" * 50_000,
    "1" * 100_000,
    "\ud800 lone surrogate",
    "\n".join(["word " * 10] * 2_000),
    "if True:\n" + "".join(" " * i + "if True:\n" for i in range(1, 200)),
]


@pytest.mark.timeout(60)  # a hang guard (e.g. catastrophic backtracking), not a speed assertion
@pytest.mark.parametrize("junk", JUNK, ids=range(len(JUNK)))
def test_junk_never_raises_or_hangs(junk):
    parsed = parse_reply(junk)
    assert all(p.kind != "function" for p in parsed.pieces)
