"""The sentence-order check of ``-v2``: shuffles lose, honest pairs in order (or nearly) keep their score."""

import dataclasses

import pytest

from llm_coop_envs.writing.thresholds import TLDR_V1_LEVELS, OrderCheck
from llm_coop_envs.writing.order import concordance_counts, dangling_opener, split_sentences
from tests.writing.conftest import index_of
from benchmarks.writing.probe_cases import SHUFFLE_SEEDS, SHUFFLES
from tests.writing.test_probes import CASES, MARGIN, case_for


def _evaluate(task, index, pair):
    return task.evaluate(index, dict(zip(task.agents, pair)))


def test_sentences_openers_and_concordance():
    assert split_sentences("One. Two? Three!\n\n- four\nfive") == ["One.", "Two?", "Three!", "- four\nfive"]
    assert split_sentences("  ") == []
    assert dangling_opener("However, it rained.") == "however"
    assert dangling_opener("As a result the roof leaked.") == "as a result"
    assert dangling_opener("He said, however, that it rained.") is None
    assert dangling_opener("Thus far nothing.") == "thus"
    assert dangling_opener("") is None and dangling_opener("\x00" * 10) is None
    assert concordance_counts([0, 1, 2]) == (3, 0)
    assert concordance_counts([2, 1, 0]) == (0, 3)
    assert concordance_counts([0, 0, 1]) == (2, 0)  # the tie counts neither way


def test_order_check_validates_its_numbers():
    for bad in ({"min_share": 0.0}, {"min_pairs": 0}, {"min_pairs": True}, {"max_reversed": 1.0}):
        with pytest.raises(ValueError):
            OrderCheck(**bad)
    with pytest.raises(TypeError, match="OrderCheck"):
        dataclasses.replace(TLDR_V1_LEVELS, order={"min_pairs": 3})


@pytest.mark.parametrize("env_name,task_id", CASES)
def test_genuine_pairs_score_exactly_as_on_v1(genuine, v2_tasks, env_name, task_id):
    v1_task, index, case = case_for(genuine, env_name, task_id)
    v2_task = v2_tasks[env_name]
    v2 = _evaluate(v2_task, index_of(v2_task, task_id), case.genuine)
    assert v2.reward == _evaluate(v1_task, index, case.genuine).reward
    assert v2.reward.total >= 0.9 * v2_task.max_reward()


@pytest.mark.parametrize("env_name,task_id", CASES)
def test_neighbouring_sentences_swapped_lose_nothing(genuine, v2_tasks, env_name, task_id):
    """Honest text slightly out of order: any two neighbours of the second text swapped (opening kept)."""
    _, _, case = case_for(genuine, env_name, task_id)
    task = v2_tasks[env_name]
    index = index_of(task, task_id)
    honest = _evaluate(task, index, case.genuine).reward.total
    parts = split_sentences(case.genuine[1])
    for k in range(1, len(parts) - 1):
        swapped = parts[:k] + [parts[k + 1], parts[k]] + parts[k + 2 :]
        assert _evaluate(task, index, (case.genuine[0], " ".join(swapped))).reward.total == honest, k


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_dangling_opening_or_reversed_retelling_fails_coherence(genuine, v2_tasks, env_name):
    _, _, case = case_for(genuine, env_name, "t3_16d1zi" if env_name == "tldr" else "0704.0460")
    task = v2_tasks[env_name]
    index = index_of(task, "t3_16d1zi" if env_name == "tldr" else "0704.0460")
    honest = _evaluate(task, index, case.genuine).reward.total
    opened = _evaluate(task, index, (case.genuine[0], "Moreover, " + case.genuine[1]))
    feedback = next(iter(opened.feedback.values()))
    assert 'opens with "moreover"' in feedback and opened.reward.components["coherence"] == 0.0
    assert opened.reward.total <= honest - MARGIN
    reversed_ = " ".join(s.replace("However, ", "").replace("Meanwhile, ", "") for s in reversed(split_sentences(case.genuine[1])))
    scrambled = _evaluate(task, index, (case.genuine[0], reversed_))
    assert "scrambled order" in next(iter(scrambled.feedback.values())), scrambled.details["metrics"]["order"]
    assert scrambled.reward.components["coherence"] == 0.0


@pytest.mark.parametrize("probe", list(SHUFFLES))
@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_shuffles_never_gain_and_caught_ones_lose_clearly(genuine, v2_tasks, env_name, probe):
    """Over 10 sources x 5 seeds: -v2 never scores a shuffle above -v1, a shuffle the order check
    catches scores at least MARGIN below the genuine pair, and most shuffles (more than on -v1) score
    clearly below the genuine pair (not all: see "What the order check does not catch" in the docs)."""
    caught = total = below_v1 = below_v2 = 0
    for task_id in genuine[env_name][1]:
        v1_task, index, case = case_for(genuine, env_name, task_id)
        task = v2_tasks[env_name]
        honest = _evaluate(task, index_of(task, task_id), case.genuine).reward.total
        for seed in SHUFFLE_SEEDS:
            pair = SHUFFLES[probe](case, seed)
            v2 = _evaluate(task, index_of(task, task_id), pair)
            v1_total = _evaluate(v1_task, index, pair).reward.total
            assert v2.reward.total <= v1_total + 1e-9
            below_v1 += v1_total < honest - MARGIN
            below_v2 += v2.reward.total < honest - MARGIN
            order = v2.details["metrics"].get("order", {})
            flagged = "Coherence failed" in next(iter(v2.feedback.values())) and (
                order.get("dangling_opener") or "scrambled order" in next(iter(v2.feedback.values()))
            )
            if flagged:
                caught += 1
                assert v2.reward.total <= honest - MARGIN, (task_id, seed, v2.feedback)
            total += 1
    print(f"{env_name} {probe}: order check fired on {caught}, clearly below genuine v1 {below_v1} / v2 {below_v2} of {total}")
    assert below_v2 > below_v1 and below_v2 >= total // 2, (caught, below_v1, below_v2, total)


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_junk_never_raises_on_v2(genuine, v2_tasks, env_name):
    from tests.writing.test_robustness import JUNK

    _, _, case = case_for(genuine, env_name, next(iter(genuine[env_name][1])))
    task = v2_tasks[env_name]
    index = index_of(task, next(iter(genuine[env_name][1])))
    for junk in JUNK + ["However. " * 50, "They. Its. Their. " * 20, "Finally, " + case.genuine[1]]:
        assert dangling_opener(junk) is None or isinstance(dangling_opener(junk), str)
        for replies in ((junk, junk), (case.genuine[0], junk), (junk, case.genuine[1])):
            evaluation = _evaluate(task, index, replies)
            assert 0.0 <= evaluation.reward.total <= task.max_reward()
