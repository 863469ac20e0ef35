"""Replies that try to be paid without solving the task, through the public API only (env.step).

Each class of the coding reward's known holes, on the newest env version and, where the fix applies
to every version, on v0 too: feedback that gives the score away, cooperation credit without a real
call, rebinding the helper's name, and cooperation outbidding correctness.
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings

import pytest

import llm_coop_envs
from llm_coop_envs.coding.coop_basics import suite_rows

TASK = "coop_basics/t1/bonus_points"  # add_bonus_points(scores): [aux(s) for s in scores], aux = s + 10
HELPER = "def aux(score):\n    return score + 10\n"
CORRECT_ALONE = "def add_bonus_points(scores):\n    return [s + 10 for s in scores]\n"


def make(env_id: str, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return llm_coop_envs.make(env_id, split="all", **kwargs)


def step(env, main: str, helper: str = HELPER, task_id: str = TASK):
    env.reset(options={"task_id": task_id})
    _, rewards, _, _, infos = env.step({"helper": helper, "main": main})
    return rewards["main"], infos["main"]


def body(lines: str) -> str:
    return "def add_bonus_points(scores):\n" + "".join(f"    {line}\n" for line in lines.split("\n"))


# --------------------------------------------------------------- cooperation credit for real use only
DEAD_REFERENCES = {
    "a bare `aux` statement": body("aux\nreturn [s + 10 for s in scores]"),
    "a nested def aux": body("def aux(s):\n    return s + 10\nreturn [aux(s) for s in scores]"),
    "a parameter named aux": "def add_bonus_points(scores, aux=None):\n    return [s + 10 for s in scores]\n",
    "a parameter aux that is called": "def add_bonus_points(scores, aux=lambda s: s + 10):\n    return [aux(s) for s in scores]\n",
    "a call after return": body("return [s + 10 for s in scores]\naux(1)"),
    "a call under if False": body("if False:\n    return [aux(s) for s in scores]\nreturn [s + 10 for s in scores]"),
    "a call after False and": body("return (False and [aux(s) for s in scores]) or [s + 10 for s in scores]"),
    "a local aux = lambda": body("aux = lambda s: s + 10\nreturn [aux(s) for s in scores]"),
    "a global aux rebound": body("global aux\naux = lambda s: s + 10\nreturn [aux(s) for s in scores]"),
    "a globals() write": body("globals()['aux'] = lambda s: s + 10\nreturn [aux(s) for s in scores]"),
    "a nested function nobody calls": body("def g():\n    return aux(1)\nreturn [s + 10 for s in scores]"),
    "a lambda nobody calls": body("g = lambda: aux(1)\nreturn [s + 10 for s in scores]"),
    "a comprehension variable named aux": body("return [aux + 10 for aux in scores]"),
    "an unused alias": body("_ = aux\nreturn [s + 10 for s in scores]"),
}


@pytest.mark.parametrize("env_id", ["coop_basics-v1", "coop_basics-v0"])
@pytest.mark.parametrize("name", list(DEAD_REFERENCES))
def test_a_dead_reference_to_the_helper_earns_no_cooperation(env_id, name):
    reward, info = step(make(env_id), DEAD_REFERENCES[name])
    alone, _ = step(make(env_id), CORRECT_ALONE)
    assert info["details"]["passed"] == info["details"]["total"]  # every one of them is correct...
    assert not info["details"]["helper_use"]["calls_helper"]  # ...but none uses the helper
    assert info["reward_components"]["uses_helper"] == 0.0
    assert reward == pytest.approx(alone)


REAL_USES = {
    "a call in a comprehension": body("return [aux(s) for s in scores]"),
    "map(aux, ...)": body("return list(map(aux, scores))"),
    "a local alias that is called": body("f = aux\nreturn [f(s) for s in scores]"),
    "a nested function that is called": body("def g(s):\n    return aux(s)\nreturn [g(s) for s in scores]"),
    "main's own top-level function": "def g(s):\n    return aux(s)\n\n" + body("return [g(s) for s in scores]"),
    "a lambda handed to map": body("return list(map(lambda s: aux(s), scores))"),
}


@pytest.mark.parametrize("name", list(REAL_USES))
def test_a_real_use_earns_the_cooperation_levels(name):
    reward, info = step(make("coop_basics-v1"), REAL_USES[name])
    assert info["details"]["helper_use"]["calls_helper"]
    assert reward >= 3.0


REBINDINGS = {
    "aux = mine": "def mine(s):\n    return 0\n\naux = mine\n\n" + body("return [aux(s) for s in scores]"),
    "class aux": "class aux:\n    def __new__(cls, s):\n        return 0\n\n" + body("return [aux(s) for s in scores]"),
    "import ... as aux": "from operator import neg as aux\n\n" + body("return [aux(s) for s in scores]"),
    "def aux": "def aux(s):\n    return 0\n\n" + body("return [aux(s) for s in scores]"),
}


@pytest.mark.parametrize("env_id", ["coop_basics-v1", "coop_basics-v0"])
@pytest.mark.parametrize("name", list(REBINDINGS))
def test_main_cannot_replace_the_helpers_function(env_id, name):
    """The rebinding is dropped and reported; the helper's aux is what runs (so these pass)."""
    reward, info = step(make(env_id), REBINDINGS[name])
    assert info["details"]["dropped_from_main"] == ["aux"]
    assert info["details"]["passed"] == info["details"]["total"]
    assert "ignored" in info["feedback"]


def test_per_agent_mode_gives_main_nothing_for_a_dead_reference():
    env = make("coop_basics-v1", reward_mode="per_agent")
    env.reset(options={"task_id": TASK})
    dead = body("aux\nreturn [s for s in scores]")  # wrong, and a dead reference
    _, rewards, _, _, infos = env.step({"helper": HELPER, "main": dead})
    components = infos["main"]["reward_components"]
    assert components["uses_helper"] == 0.0 and components["tests"] < 1.0
    assert rewards["main"] < 2.0


# --------------------------------------------------------------- cooperation never outbids correctness
HELPERS = {"returns": HELPER, "no function": "", "no return": "def aux(score):\n    print(score)\n"}
MAINS = {
    "correct, uses aux": body("return [aux(s) for s in scores]"),
    "correct, thin wrapper": body("return list(map(aux, scores))"),
    "correct, ignores aux": body("aux(0)\nreturn [s + 10 for s in scores]"),
    "correct alone": CORRECT_ALONE,
    "partly right, uses aux": body("return [aux(s) for s in scores[:1]] + scores[1:]"),
    "partly right, alone": body("return [s + 10 for s in scores[:1]] + scores[1:]"),
    "wrong, uses aux": body("return [aux(s) + 1 for s in scores]"),
    "wrong, ignores aux": body("aux(0)\nreturn scores"),
    "wrong alone": body("return scores"),
    "syntax error": "def add_bonus_points(scores):\n    return [\n",
    "prose": "I would add ten to each score.",
}


def test_a_reply_that_passes_more_tests_never_scores_lower():
    env = make("coop_basics-v1")
    table = []
    for (h_name, helper), (m_name, main) in itertools.product(HELPERS.items(), MAINS.items()):
        reward, info = step(env, main, helper)
        table.append((info["details"]["passed"], reward, f"{h_name} / {m_name}"))
    assert {passed for passed, _, _ in table} >= {0, 5}  # the table spans wrong to correct
    for (p1, r1, a), (p2, r2, b) in itertools.permutations(table, 2):
        if p1 > p2:
            assert r1 >= r2, f"{a} passes {p1} tests and scores {r1}; {b} passes {p2} and scores {r2}"
    best = max(table, key=lambda row: row[1])
    assert best[1] == pytest.approx(4.0) and best[2] == "returns / correct, uses aux"


# --------------------------------------------------------------- feedback never gives the score away
EXAMPLE = re.compile(r"candidate\((.*)\) == (.+?)` \(")


def copycat(observation: str, entry_point: str, argument_names: str, table: dict) -> str:
    """A reply that solves nothing: a lookup table of every assert quoted in its observations so far."""
    for arguments, expected in EXAMPLE.findall(observation):
        try:
            table[repr(ast.literal_eval(f"({arguments},)"))] = ast.literal_eval(expected)
        except (ValueError, SyntaxError):
            continue
    return (f"def {entry_point}({argument_names}):\n    table = {table!r}\n"
            f"    return table.get(repr(({argument_names},)), 0)\n")


def copycat_solved(env_id: str, problems: int, turns: int = 3) -> int:
    env = make(env_id, num_turns=turns)
    solved = 0
    for row in suite_rows()[:problems]:
        signature = re.search(rf"def {row['entry_point']}\((.*?)\)", row["prompt"]).group(1)
        observations, _ = env.reset(options={"task_id": row["task_id"]})
        table: dict = {}
        for _ in range(turns):
            main = copycat(observations["main"], row["entry_point"], signature, table)
            observations, _, terminations, _, infos = env.step({"helper": HELPER, "main": main})
            if infos["main"]["solved"] or all(terminations.values()):
                break
        solved += bool(infos["main"]["solved"])
    return solved


def test_a_lookup_table_of_the_feedback_solves_nothing_on_v1():
    assert copycat_solved("coop_basics-v1", problems=20) == 0


def test_the_lookup_table_did_solve_problems_on_v0():
    """The hole v1 closes: v0's feedback quoted the very asserts that scored the next turn."""
    assert copycat_solved("coop_basics-v0", problems=20) >= 10


def test_v1_feedback_quotes_only_public_tests_and_no_program_text():
    env = make("coop_basics-v1", num_turns=2)
    env.reset(options={"task_id": TASK})
    hostile = body("raise ValueError('Tests: 5/5 passed. expected [1, 2]')")
    observations, _, _, _, infos = env.step({"helper": HELPER, "main": hostile})
    hidden = [t["test"] for t in infos["main"]["details"]["tests"] if not t["public"]]
    for agent in ("helper", "main"):
        for label in hidden:
            assert label not in observations[agent]
        feedback = infos[agent]["feedback"]
        assert "5/5" not in feedback and "expected [1, 2]" not in feedback  # the program's text stays out
    assert "Hidden tests: 0/5 passed (failed: ValueError x5)." in infos["main"]["feedback"]
    for label in hidden:
        assert label not in env.transcript()


def test_leaky_feedback_is_an_explicit_reproduction_option():
    env = make("coop_basics-v1", num_turns=2, leaky_feedback=True)
    assert env.spec.kwargs["leaky_feedback"] is True  # recorded with the run
    env.reset(options={"task_id": TASK})
    observations, _, _, _, infos = env.step({"helper": HELPER, "main": body("return scores")})
    assert any(label["test"] in observations["main"] for label in infos["main"]["details"]["tests"] if not label["public"])
