"""The draw checks of ``coop_procedural-v1`` (``llm_coop_envs.coding.procedural.draw_checks``), on every
problem of ``test`` and ``heldout_families`` and on 1,000 training draws."""

from __future__ import annotations

import pytest

from llm_coop_envs.coding.procedural.draw_checks import (
    MAX_BLIND_SHARE, blind_replies, fact_spread, judged_equal, violations)
from llm_coop_envs.coding.procedural.families import FAMILIES, LEVELS
from llm_coop_envs.coding.procedural.generate import TrainRows, fixed_rows

NARROW_FACTS = {("convert_amounts", 2), ("convert_amounts", 3), ("valid_codes", 2), ("valid_codes", 3)}
"""Cells whose generator (v0's, kept by v1) draws its helper-only fact from fewer than 10 values
(convert_amounts: 7 rates) or one value more often than 10 % (valid_codes: a divisor rule, 3 divisors
on half the draws): the draw checks cannot widen them; a later version's generators must."""


def _rows():
    yield from fixed_rows("test", None, True)
    yield from fixed_rows("heldout_families", None, True)
    train = TrainRows(checks=True)
    yield from (train[i] for i in range(1000))


def test_every_v1_problem_passes_the_draw_checks():
    failing = {row["task_id"]: violations(row) for row in _rows() if violations(row)}
    assert not failing, failing


def test_the_checks_would_reject_most_v0_cells():
    """They check something: v0's own test problems fail them, as the measurements said."""
    failing = [row for row in fixed_rows("test") if violations(row)]
    assert len(failing) > len(fixed_rows("test")) // 4


def test_no_problem_blind_reply_passes_more_than_a_third_of_a_v1_problems_hidden_tests():
    for row in _rows():
        compare = next((t.get("compare", "eq") for t in row["tests"]), "eq")
        for name, reply in blind_replies(row["public_tests"], row["tests"]).items():
            passed = 0
            for test in row["tests"]:
                try:
                    passed += judged_equal(reply(*test["args"]), test["expected"], compare)
                except Exception:  # noqa: BLE001 -- a blind reply that cannot run on an input fails it
                    pass
            assert passed <= MAX_BLIND_SHARE * len(row["tests"]), (row["task_id"], name)


@pytest.mark.parametrize("family,level", [(f, lv) for f in FAMILIES for lv in LEVELS if fact_spread(f, lv, 300)[0]])
def test_a_helper_only_fact_takes_ten_values_none_above_ten_percent(family, level):
    values, share = fact_spread(family, level)
    if (family, level) in NARROW_FACTS:
        assert values < 10 or share > 0.10  # still narrow: remove it from NARROW_FACTS when fixed
    else:
        assert values >= 10 and share <= 0.10, (values, share)


def test_v1_problems_differ_from_v0_only_by_the_draws_kept():
    """Same generators: every v1 test problem is a problem v0's generator could draw (its family, level
    and split), and the checked ids are registered under their own name."""
    import llm_coop_envs

    env = llm_coop_envs.make("coop_procedural-v1", split="test", level=1)
    assert env.metadata["name"] == "coop_procedural-v1" and env.task.rules.name == "v2"
    for row in fixed_rows("test", None, True):
        assert row["family"] in FAMILIES and row["split"] == "test"
