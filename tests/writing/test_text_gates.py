"""Each text's own structure gates, and the ``-v4`` credit for the gates passed (no model: gated pairs only)."""

import warnings

import pytest

import llm_coop_envs
from llm_coop_envs.writing.text_gates import GATES, failed_gate_credit, text_gates
from tests.writing.conftest import index_of
from tests.writing.genuine import TLDR_DETAILS

POST_ID = "t3_23za1b"


@pytest.fixture(scope="module")
def envs(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return {v: llm_coop_envs.make(f"tldr-{v}", split="all") for v in ("v3", "v4")}


def _genuine(task):
    return {"tldr": task.items[index_of(task, POST_ID)].reference, "detail": TLDR_DETAILS[POST_ID]}


def _structure(env, replies):
    task = env.task
    score = task.score(index_of(task, POST_ID), replies)
    return score, score.level_scores()["structure"]


def test_a_genuine_pair_passes_every_gate_of_both_texts(envs):
    task = envs["v4"].task
    gates = text_gates(task.pair(index_of(task, POST_ID), _genuine(task)), task.config)
    assert set(gates) == {"tldr", "detail"}
    assert all(tuple(passed) == GATES and all(passed.values()) for passed in gates.values())


@pytest.mark.parametrize("detail,gate", [
    ("the same words " * 40, "distinct"),
    (TLDR_DETAILS[POST_ID].rstrip(".") + " and because of", "finished"),
    ("However, " + TLDR_DETAILS[POST_ID], "opening"),
])
def test_each_gate_is_found_on_its_own_text(envs, detail, gate):
    task = envs["v4"].task
    replies = {**_genuine(task), "detail": detail}
    gates = text_gates(task.pair(index_of(task, POST_ID), replies), task.config)
    assert all(gates["tldr"].values())
    assert not gates["detail"][gate]


def test_v4_pays_a_credit_below_any_passing_pair_where_v3_pays_nothing(envs):
    task = envs["v4"].task
    looping = {**_genuine(task), "detail": "the same words " * 40}
    score3, structure3 = _structure(envs["v3"], looping)
    score4, structure4 = _structure(envs["v4"], looping)
    assert structure3 == 0.0 and not score3.gates_passed
    assert 0.2 < structure4 < 0.4 and not score4.gates_passed and not score4.levels[0].passed
    assert len(score4.levels) == 1, "scoring still stops at a failed gate"
    assert "distinct" in score4.metrics["gates_failed"]["detail"] and not score4.metrics["gates_failed"]["tldr"]
    assert "Credit" in score4.levels[0].message and "detail: distinct" in score4.levels[0].message


def test_fewer_failed_gates_earn_more_and_the_credit_stays_below_the_ratio_failure():
    passing = dict.fromkeys(GATES, True)
    one_off = {**passing, "copy": False}
    two_off = {**one_off, "finished": False}
    credit = [failed_gate_credit({"a": a, "b": b}, 0.4) for a, b in
              [(passing, one_off), (passing, two_off), (one_off, two_off), (two_off, two_off)]]
    assert credit == sorted(credit, reverse=True) and len(set(credit)) == 4
    assert max(credit) < 0.4 < 0.5
    assert failed_gate_credit({"a": dict.fromkeys(GATES, False), "b": dict.fromkeys(GATES, False)}, 0.4) == 0.0


def test_hostile_strings_never_raise(envs):
    task = envs["v4"].task
    index = index_of(task, POST_ID)
    for text in ("", " ", "\x00" * 50, "é" * 5000, ";:;:" * 100, "However," * 300, "thе pаper " * 30):
        score = task.score(index, {"tldr": text, "detail": text})
        assert 0.0 <= score.level_scores()["structure"] < 0.4


def test_the_credit_must_stay_below_a_passing_pair():
    from llm_coop_envs.writing.thresholds import TLDR_V3_LEVELS, LMCheck

    with pytest.raises(ValueError, match="failed_gate_credit"):
        LMCheck(failed_gate_credit=0.5)
    assert TLDR_V3_LEVELS.lm.failed_gate_credit == 0.0
