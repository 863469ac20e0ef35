"""The helper-dependent solve rate (solved, and the counterfactual check finds that main needs the
helper's ``aux``) read from real env verdicts, and shown in the demo's table and the bench report."""

from __future__ import annotations

import warnings

import pytest

import llm_coop_envs
from benchmarks.learning.aggregate import family_of, per_family
from benchmarks.learning.records import Run
from benchmarks.learning.report import family_section
from llm_coop_envs.coding.dependence import solved_needing_helper
from trainers.before_after import before_after_report

TASK = "coop_basics/t1/bonus_points"
HELPER = "def aux(score):\n    return score + 10\n"
NEEDS_AUX = "def add_bonus_points(scores):\n    return [aux(s) for s in scores]\n"
IDENTITY_HELPER = "def aux(v):\n    return v\n"
ROUTES_THROUGH_IDENTITY = "def add_bonus_points(scores):\n    return [aux(s) + 10 for s in scores]\n"
WRONG = "def add_bonus_points(scores):\n    return scores\n"


def verdict(env_id: str, helper: str, main: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the older id's deprecation warning
        env = llm_coop_envs.make(env_id, split="all")
    env.reset(options={"task_id": TASK})
    infos = env.step({"helper": helper, "main": main})[4]
    env.close()
    return infos["main"]


@pytest.mark.parametrize("helper,main,expected", [
    (HELPER, NEEDS_AUX, True),  # real cooperation
    (IDENTITY_HELPER, ROUTES_THROUGH_IDENTITY, False),  # solved, but the identity stand-in solves it too
    (HELPER, WRONG, False),  # not solved
])
def test_read_from_the_counterfactual_of_a_v2_verdict(helper, main, expected):
    info = verdict("coop_basics-v2", helper, main)
    assert solved_needing_helper(info) is expected


def test_older_rules_have_no_counterfactual_so_the_rate_is_not_measured():
    assert solved_needing_helper(verdict("coop_basics-v1", HELPER, NEEDS_AUX)) is None
    assert solved_needing_helper({"solved": True, "details": {}}) is None


def _record(task_id: str, solved: bool, needed: bool | None, calls: bool) -> dict:
    return {"task_id": task_id, "reward": 1.0, "solved": solved, "tests_passed": float(solved),
            "helper_needed": needed, "calls_helper": calls, "main_calls_helper": calls}


def test_the_demo_table_shows_the_rate_beside_the_call_rate_and_only_when_measured():
    ids = [f"t{i}" for i in range(4)]
    before = [_record(i, False, False, False) for i in ids]
    after = [_record(i, True, i != "t0", True) for i in ids]
    table = before_after_report(before, after)
    assert "| solved needing the helper | 0/4 (0%) | 3/4 (75%) |" in table
    assert table.index("solved needing the helper") < table.index("main calls the helper")
    unmeasured = before_after_report([{**r, "helper_needed": None} for r in before],
                                     [{**r, "helper_needed": None} for r in after])
    assert "solved needing the helper" not in unmeasured


def test_the_bench_report_gives_it_per_family():
    ids = [f"coop_procedural/{family}/L4/{n:08x}" for family in ("bonus_scores", "tag_words") for n in range(2)]
    assert family_of(ids[0]) == "bonus_scores" and family_of("HumanEval/3") is None
    runs = []
    for seed in (0, 1):
        run = Run(name=f"magrpo_s{seed}", algo="magrpo", seed=seed, status="done")
        run.evals = {0: [_record(i, False, False, False) for i in ids],
                     8: [_record(i, True, i.startswith("coop_procedural/bonus"), True) for i in ids]}
        runs.append(run)
    table = per_family(runs, ids)
    assert table["bonus_scores"]["after"] == {"pass_rate": 1.0, "helper_dependent_rate": 1.0, "helper_call_rate": 1.0}
    assert table["tag_words"]["after"]["helper_dependent_rate"] == 0.0
    assert table["tag_words"]["before"]["pass_rate"] == 0.0
    section = family_section({"algorithms": {"magrpo": {"families": table}}})
    assert "| MAGRPO (two agents) | bonus_scores | 0.0 → 100.0 | 0.0 → 100.0 | 0.0 → 100.0 |" in section[1]
    assert per_family(runs, ["HumanEval/1"]) is None
