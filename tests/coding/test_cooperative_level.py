"""``coop_procedural-v2``'s cooperative level: a level the pair can only solve together.

Loaded offline through ``reset(seed=...)``; the helper's reply replaced by a stub and by prose fails every
problem; the draw checks hold; every fact takes at least 10 values, none drawn more than one time in ten;
the best main that does not call ``aux`` (the family's most frequent fact inlined) solves at most 10 %."""

from __future__ import annotations

import collections
import random

import pytest

import llm_coop_envs
from benchmarks.cooperative_calibration import most_frequent_aux
from llm_coop_envs.coding.procedural.draw_checks import _passes, fact_spread, judged_equal, violations
from llm_coop_envs.coding.procedural.env import env_v2 as make_v2
from llm_coop_envs.coding.procedural.families import COOPERATIVE_LEVEL, FAMILIES, draft_for

ENV_ID = "coop_procedural-v2"  # not registered yet (its calibration is open): built by its env function
LEVEL = COOPERATIVE_LEVEL
PROSE = "I will write the helper function aux for you."
STUB = "```python\ndef aux(*a):\n    return None\n```"


def _rows(split: str, count: int | None = None) -> list[dict]:
    env = make_v2(split=split, level=LEVEL)
    return [env.task.problems[i].row for i in range(count or len(env.task))]


def test_the_level_is_named_and_narrows_every_split(monkeypatch, tmp_path):
    monkeypatch.setenv("LLM_COOP_DATA_DIR", str(tmp_path))  # nothing to read: the suite is generated
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for split in ("train", "test", "heldout_families"):
        env = make_v2(split=split, level=LEVEL)
        assert env.metadata["suite"]["cooperative_levels"] == [LEVEL]
        observations, infos = env.reset(seed=3)
        again, _ = make_v2(split=split, level=LEVEL).reset(seed=3)
        assert observations == again and f"/L{LEVEL}/" in infos["main"]["task_id"]
    assert make_v2(split="test").metadata["suite"]["levels"] == [1, LEVEL]
    with pytest.raises(ValueError):
        make_v2(level=2)


def test_each_agent_sees_its_own_part():
    """Main is told what aux returns, not the fact; the helper sees aux's contract and the fact, never
    main's problem; one agent alone (team="single") is shown the fact too."""
    env = make_v2(split="test", level=LEVEL)
    single = make_v2(split="test", level=LEVEL, team="single")
    for index in range(len(env.task)):
        row = env.task.problems[index].row
        main, helper = env.task.prompt(index, "main"), env.task.prompt(index, "helper")
        assert row["helper_fact"] and row["helper_fact"] not in main and "aux(" in row["prompt"]
        assert row["helper_fact"] in helper and row["entry_point"] not in helper
        assert row["helper_fact"] in single.task.prompt(index, "main")


@pytest.mark.parametrize("split", ["test", "heldout_families"])
def test_the_helper_is_needed(split):
    """The reference pair earns the top reward; the same main with a stub or prose for the helper fails."""
    env = make_v2(split=split, level=LEVEL)
    items = []
    for index in range(len(env.task)):
        row = env.task.problems[index].row
        main = f"```python\n{row['reference_main']}```"
        items += [(index, {"helper": helper, "main": main})
                  for helper in (f"```python\n{row['reference_helper']}```", STUB, PROSE)]
    evaluations = env.task.evaluate_many(items)
    for (index, replies), evaluation in zip(items, evaluations):
        reference = replies["helper"].startswith("```python\ndef aux(") and replies["helper"] != STUB
        assert evaluation.solved == reference, (env.task.task_id(index), replies["helper"])
        if reference:
            assert evaluation.reward.total == pytest.approx(4.0)


def test_every_cooperative_problem_passes_the_draw_checks():
    rows = _rows("test") + _rows("heldout_families") + _rows("train", 240)
    failing = {row["task_id"]: violations(row) for row in rows if violations(row)}
    assert not failing, failing


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_fact_is_spread_and_never_a_stand_in_value(family):
    values, share = fact_spread(family, LEVEL)
    assert values >= 10 and share <= 0.10, (values, share)
    for index in range(50):
        draft = draft_for(family, random.Random(f"stand-in-values/{index}"), LEVEL)
        assert draft.helper_fact, family
        constants = [c.strip(" .:'") for c in draft.helper_fact.replace(",", " ").split()]
        assert not {"0", "1", "True", "False", "None", "[]", "''"} & set(constants), draft.helper_fact


def test_the_best_main_without_aux_solves_at_most_a_tenth():
    """Main's reference with its family's most frequent fact inlined, on training draws of every family."""
    rows = _rows("train", 360)
    passed = collections.Counter()
    for row in rows:
        namespace: dict = {}
        exec(most_frequent_aux(row["family"], LEVEL) + row["reference_main"], namespace)
        compare = next((t.get("compare", "eq") for t in row["tests"]), "eq")
        same = lambda a, b: judged_equal(a, b, compare)  # noqa: E731
        passed[row["family"]] += _passes(namespace[row["entry_point"]], row["tests"], same) == len(row["tests"])
    assert sum(passed.values()) <= 0.10 * len(rows), passed


def test_level_one_keeps_v1s_problems():
    """v2's level 1 is v1's level 1 (the same draws), under the pair prompts."""
    v1 = llm_coop_envs.make("coop_procedural-v1", split="test", level=1)
    v2 = make_v2(split="test", level=1)
    assert [v1.task.task_id(i) for i in range(len(v1.task))] == [v2.task.task_id(i) for i in range(len(v2.task))]
    assert v1.task.prompt(0, "helper") != v2.task.prompt(0, "helper")


def test_only_the_first_code_block_of_a_pair_v2_reply_is_code():
    """Its prompts ask for one block: a small model repeats its answer block after block until its token
    cap cuts the last one, and a cut ``+ 1`` of ``+ 12`` still parses; v1's prompts keep every block."""
    env = make_v2(split="test", level=LEVEL)
    row = env.task.problems[0].row
    good = f"```python\n{row['reference_helper']}```"
    cut_repeat = good + "\n\n```python\ndef aux(*a):\n    return None"
    main = f"```python\n{row['reference_main']}```\n\n```python\ndef {row['entry_point']}(xs):\n    return 0\n```"
    solved, = (ev.solved for ev in env.task.evaluate_many([(0, {"helper": cut_repeat, "main": main})]))
    assert solved
    v1 = llm_coop_envs.make("coop_procedural-v1", split="test", level=1)
    v1_row = v1.task.problems[0].row
    later_wins = (f"```python\n{v1_row['reference_main']}```\n\n```python\n"
                  f"def {v1_row['entry_point']}(*a):\n    return None\n```")
    v1_solved, = (ev.solved for ev in v1.task.evaluate_many([(0, {"helper": "", "main": later_wins})]))
    assert not v1_solved


def test_one_agent_is_told_to_define_aux_where_the_stated_expression_calls_it():
    single = make_v2(split="test", level=LEVEL, team="single")
    assert "functions `aux` and" in single.task.prompt(0, "main")
    level_one = make_v2(split="test", level=1, team="single")
    assert "functions `aux` and" not in level_one.task.prompt(0, "main")


def test_on_a_problem_that_needs_no_helper_main_sees_what_one_agent_sees():
    pair, single = make_v2(split="test", level=1), make_v2(split="test", level=1, team="single")
    for index in range(0, len(pair.task), 7):
        assert pair.task.prompt(index, "main") == single.task.prompt(index, "main")
    cooperative = make_v2(split="test", level=LEVEL)
    assert "written by a partner" in cooperative.task.prompt(0, "main")
