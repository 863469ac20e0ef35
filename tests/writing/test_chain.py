"""The -v5 reward's gates and consistency, offline (the claims extra; no language model).

The model-read levels of -v5 are those of -v4; the hostile table measures the whole chain
(benchmarks/results/writing_v5/hostile.md)."""

import dataclasses

import pytest

pytest.importorskip("spacy")
pytest.importorskip("pint")

from benchmarks.writing import hostile_facts  # noqa: E402
from benchmarks.writing.hostile import cases  # noqa: E402
from llm_coop_envs.writing import gates  # noqa: E402
from llm_coop_envs.writing.chain import _cut_short, consistency_level, gated  # noqa: E402
from llm_coop_envs.writing.gates import finished_part  # noqa: E402
from llm_coop_envs.writing.outcome import LevelOutcome  # noqa: E402
from llm_coop_envs.writing.reward import PairTexts  # noqa: E402
from llm_coop_envs.writing.thresholds import (  # noqa: E402
    ARXIV_V4_LEVELS, ARXIV_V5_LEVELS, TLDR_V4_LEVELS, TLDR_V5_LEVELS, ClaimsCheck,
)

CONFIGS = {"tldr": TLDR_V5_LEVELS, "arxiv": ARXIV_V5_LEVELS}


def _pair(task, task_id, texts):
    index = next(i for i in range(len(task)) if task.task_id(i) == task_id)
    return dataclasses.replace(task.pair(index, dict(zip(task.agents, texts))), profile=task.profile(index))


@pytest.fixture(scope="module")
def all_cases(genuine):
    return {kind: (task, cases(kind, task)) for kind, (task, _) in genuine.items()}


def test_v4_settings_are_unchanged_by_v5():
    assert TLDR_V4_LEVELS.claims is None and ARXIV_V4_LEVELS.claims is None
    v4_lm = dataclasses.replace(TLDR_V5_LEVELS.lm, drop_unfinished_tail=(False, False), unfinished_tail_factor=1.0)
    assert dataclasses.replace(TLDR_V5_LEVELS, claims=None, lm=v4_lm) == TLDR_V4_LEVELS


@pytest.mark.parametrize("kind", ["tldr", "arxiv"])
def test_every_genuine_pair_passes_every_gate(all_cases, kind):
    task, found = all_cases[kind]
    for task_id, case in found:
        assert gated(_pair(task, task_id, case.genuine), CONFIGS[kind]).failed() is None, task_id


@pytest.mark.parametrize("family, gate", [
    ("zero-width copy", "visible"), ("look-alike copy", "copy"), ("chat tag on both", "tags"),
    ("filler line on both", "filler"), ("retraction appended", "retraction"), ("advice instead", "retelling"),
    ("review instead", "retelling"), ("loop varying a stopword", "loops"),
])
def test_each_job_family_fails_its_gate_on_every_source(all_cases, family, gate):
    for kind, (task, found) in all_cases.items():
        for task_id, case in found:
            table = gated(_pair(task, task_id, hostile_facts.FAMILIES[family](case)), CONFIGS[kind]).table
            assert any(not by_gate[gate] for by_gate in table.values()), (kind, task_id)


def test_the_pair_message_and_each_roles_table_are_one_evaluation(all_cases):
    task, found = all_cases["tldr"]
    task_id, case = found[0]
    result = gated(_pair(task, task_id, hostile_facts.FAMILIES["chat tag on both"](case)), TLDR_V5_LEVELS)
    failed = {role: [name for name, ok in table.items() if not ok] for role, table in result.table.items()}
    assert all("tags" in names for names in failed.values())
    message = result.failed().message
    assert message.count("chat-template tags") == 2
    assert message.count("; the ") + 1 == sum(len(names) for names in failed.values())


def test_any_string_passes_through_the_gates_without_raising():
    for text in ["", "\u200d" * 50, "<|im_end|>" * 100, "a " * 5000, "\x00\ud800", "?" * 300]:
        pair = PairTexts(("tldr", "detail"), (text, text), "A short source. It says one thing.", "post")
        assert gated(pair, TLDR_V5_LEVELS).failed() is not None


def test_one_disagreement_costs_its_stated_share_and_never_stops_the_chain():
    check = ClaimsCheck()
    assert check.consistency(1, 0) == pytest.approx(1 - check.contradiction_cost)
    assert check.consistency(0, 50) == pytest.approx(1 - check.max_unsupported_cost)
    # Repeated disagreements add up: the k-th costs k times the first, and three take the whole level.
    assert check.consistency(2, 0) == pytest.approx(1 - 3 * check.contradiction_cost)
    assert check.consistency(3, 0) == 0.0
    source = ("My sister and I share a flat. My roommate Jake keeps eating my food even though I asked him twice to "
              "stop. The heater has been broken for two weeks.")
    texts = ("I share a flat with my sister.", "It is unlikely that Jake eats my food. The heater has been broken for two weeks.")
    pair = PairTexts(("tldr", "detail"), texts, source, "post")
    metrics = {}
    outcome = consistency_level(pair, TLDR_V5_LEVELS, metrics)
    assert outcome.passed and outcome.score == pytest.approx(1 - check.contradiction_cost)
    assert metrics["claims"]["counts"]["contradicted"] == 1 and "Jake" in outcome.message


def test_gate_names_are_the_table():
    assert list(gates.GATES)[:2] == ["visible", "length"] and len(gates.GATES) == len(set(gates.GATES))


def test_three_contradictions_fail_consistency_and_stop_the_chain():
    source = ("My sister and I share a flat. My roommate Jake keeps eating my food even though I asked him twice to "
              "stop. The heater has been broken for two weeks. I am thinking about calling the landlord.")
    texts = ("I share a flat with my sister.",
             "It is unlikely that Jake eats my food. It is unlikely that the heater has been broken for two weeks. "
             "It is unlikely that I am thinking about calling the landlord.")
    metrics = {}
    outcome = consistency_level(PairTexts(("tldr", "detail"), texts, source, "post"), TLDR_V5_LEVELS, metrics)
    assert metrics["claims"]["counts"]["contradicted"] >= 3
    assert not outcome.passed and outcome.score == 0.0


@pytest.mark.parametrize("text, read", [
    ("He asked twice. Then he went to the", "He asked twice."),
    ("He asked twice. She said \"no.\" Then", "He asked twice. She said \"no.\""),
    ("He asked twice.", "He asked twice."),
    ("no sentence ends here", "no sentence ends here"),  # kept whole: `finished` fails it
])
def test_a_text_cut_mid_sentence_is_read_up_to_its_last_finished_sentence(text, read):
    assert finished_part(text) == read


def test_a_dropped_tail_is_read_nowhere_and_halves_the_pair():
    source = ("My roommate Jake keeps eating my food even though I asked him twice to stop. The heater has been broken "
              "for two weeks, and the landlord has not answered my emails.")
    cut = "Jake eats my food. The heater is broken and the landlord ignores the jumbled quant"
    found = gated(PairTexts(("tldr", "detail"), ("Roommate eats my food", cut), source, "post"), TLDR_V5_LEVELS)
    assert found.texts[1].plain == "Jake eats my food." and found.texts[1].tail_dropped
    assert found.texts[0].plain == "Roommate eats my food" and not found.texts[0].tail_dropped  # a TL;DR may omit its stop
    levels = (LevelOutcome("structure", 1.0, True, "ok"), LevelOutcome("fluency", 0.5, True, "ok"))
    halved = _cut_short(levels, ["detail"], TLDR_V5_LEVELS.lm.unfinished_tail_factor)
    assert [o.score for o in halved] == [0.5, 0.25] and "stopped mid-sentence" in halved[0].message
    assert _cut_short(levels, [], 0.5) == levels
