"""The -v1 gates and the levels about the source, on constructed texts and on real rows."""

import dataclasses
import random
import warnings

import pytest

import llm_coop_envs
from llm_coop_envs.writing import ARXIV_V1_LEVELS, TLDR_LEVELS, TLDR_V1_LEVELS, Band
from llm_coop_envs.writing.grounding import Salience, SourceProfile, function_word_share, in_order_share, lcs_length
from llm_coop_envs.writing.reward import PairTexts, score_pair
from llm_coop_envs.writing.text_metrics import words
from tests.writing.conftest import index_of
from benchmarks.writing.genuine import TLDR_DETAILS

SOURCE = (
    "The old lighthouse keeper repaired the brass lamp every winter. Storms broke the northern window twice, "
    "so he ordered thick glass from the mainland harbour. Fishermen trusted his signal during fog."
)
OTHER = "Quarterly revenue of the bakery chain grew because sourdough loaves sold well in suburban stores."
SALIENCE = Salience.from_sources([SOURCE, OTHER, "An unrelated row about garden tomatoes and spring rain."])
PROFILE = SourceProfile.build(SOURCE, SALIENCE)
FIRST = "A lighthouse keeper fixes the lamp each winter and replaces storm-broken glass."
SECOND = (
    "Every winter the keeper of an old lighthouse repairs its brass lamp. However, storms have broken the "
    "northern window twice, so he buys thick glass from the harbour on the mainland. As a result, fishermen "
    "rely on his signal in fog, for example when boats return late."
)


def score(first, second, config=TLDR_V1_LEVELS, profile=PROFILE, source=SOURCE):
    return score_pair(PairTexts(("tldr", "detail"), (first, second), source, "post", profile), config)


def test_lcs_matches_a_plain_dynamic_programme():
    rng = random.Random(0)
    for _ in range(200):
        a = [rng.choice("abcde") for _ in range(rng.randrange(0, 12))]
        b = [rng.choice("abcde") for _ in range(rng.randrange(0, 12))]
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
        assert lcs_length(a, b) == table[-1][-1]


def test_measures_on_plain_cases():
    assert in_order_share(words("the old keeper the lamp"), words(SOURCE)) == 1.0
    assert in_order_share([], words(SOURCE)) == 0.0
    assert function_word_share(words("lighthouse keeper brass lamp")) == 0.0
    assert function_word_share(words("it was in the")) == 1.0


def test_a_faithful_pair_passes_every_level():
    result = score(FIRST, SECOND)
    assert [o.name for o in result.levels] == ["structure", "grounding", "complementarity", "style", "coherence"]
    assert result.level_scores()["grounding"] == 1.0 and result.level_scores()["complementarity"] == 1.0


def test_keyword_list_fails_the_function_word_gate():
    soup = "lighthouse keeper brass lamp winter storms window glass mainland harbour fishermen signal fog"
    result = score(soup, SECOND)
    assert not result.gates_passed and "list of keywords" in result.levels[0].message


def test_source_with_words_left_out_fails_the_in_order_gate():
    kept = [w for i, w in enumerate(SOURCE.split()) if i % 3 != 2]
    result = score(FIRST, " ".join(kept))
    assert not result.gates_passed and "with words left out" in result.levels[0].message


def test_text_about_another_source_fails_grounding_and_stops():
    result = score("The bakery chain sold more sourdough this quarter, in suburban stores.", OTHER + " " + OTHER.lower())
    grounding = result.levels[-1]
    assert grounding.name == "grounding" and not grounding.passed and "not about this post" in grounding.message
    assert result.level_scores()["style"] == 0.0


def test_later_levels_scale_with_partial_grounding():
    config = dataclasses.replace(TLDR_V1_LEVELS, on_source=Band(0.1, 1.0, 1.0, 1.0))
    result = score(FIRST, SECOND, config)
    scores = result.level_scores()
    assert 0 < scores["grounding"] < 1
    assert scores["style"] <= scores["grounding"] and "× grounding" in result.levels[-1].message


def test_a_detail_restating_the_tldr_fails_complementarity():
    restated = f"{FIRST} In other words, {FIRST.lower()} Moreover, the keeper fixes the lamp; however, glass breaks."
    result = score(FIRST, restated)
    assert result.levels[-1].name == "complementarity" and not result.levels[-1].passed


def test_share_gap_fails_swapped_arxiv_roles():
    config = dataclasses.replace(
        ARXIV_V1_LEVELS, first_words=(1, 300), second_words=(1, 300), length_ratio=Band(0, 0, 100, 100), min_text_on_source=(0.0, 0.0)
    )
    background = (
        "Coastal navigation has always depended on lighthouses that guide boats home in fog, and maintaining "
        "them is hard work in harsh weather. However, keepers often lack money for repairs."
    )
    swapped = score_pair(PairTexts(("background", "method"), (SECOND, background), SOURCE, "abstract", PROFILE), config)
    assert swapped.levels[-1].name == "complementarity" and not swapped.levels[-1].passed
    assert "minus" in swapped.levels[-1].message


def test_v0_config_has_no_source_levels_and_needs_no_profile():
    result = score(FIRST, SECOND, TLDR_LEVELS, profile=None)
    assert [o.name for o in result.levels] == ["structure", "style", "coherence"]


def test_v1_config_without_profile_says_what_is_missing():
    with pytest.raises(ValueError, match="SourceProfile"):
        score(FIRST, SECOND, TLDR_V1_LEVELS, profile=None)


def test_config_validation():
    with pytest.raises(ValueError, match="both or neither"):
        dataclasses.replace(TLDR_V1_LEVELS, coverage=None)
    with pytest.raises(ValueError, match="min_text_on_source"):
        dataclasses.replace(TLDR_V1_LEVELS, min_text_on_source=0.3)
    with pytest.raises(ValueError, match="complementarity_measure"):
        dataclasses.replace(TLDR_V1_LEVELS, complementarity_measure="centre")


@pytest.mark.parametrize(
    "old,new,hole",
    [
        ("tldr-v0", "tldr-v5", "about their post"),
        ("arxiv_intro-v0", "arxiv_intro-v5", "about their abstract"),
        ("tldr-v1", "tldr-v5", "does not check sentence order"),
        ("arxiv_intro-v1", "arxiv_intro-v5", "does not check sentence order"),
        ("tldr-v2", "tldr-v5", "scores words, not meaning"),
        ("arxiv_intro-v2", "arxiv_intro-v5", "scores words, not meaning"),
        ("tldr-v3", "tldr-v5", "pays nothing for a pair that fails any structure gate"),
        ("arxiv_intro-v3", "arxiv_intro-v5", "pays nothing for a pair that fails any structure gate"),
        ("tldr-v4", "tldr-v5", "does not read the facts"),
        ("arxiv_intro-v4", "arxiv_intro-v5", "does not read the facts"),
    ],
)
def test_old_versions_warn_naming_the_hole_and_the_current_one_does_not_warn(data_dir, old, new, hole):
    with pytest.warns(FutureWarning, match=hole):
        llm_coop_envs.make(old, split="test")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = llm_coop_envs.make(new, split="test")
    assert env.task.max_reward() == 7.0


def test_v0_scores_are_unchanged(data_dir):
    with pytest.warns(FutureWarning):
        task = llm_coop_envs.make("tldr-v0", split="all").task
    index = index_of(task, "t3_23za1b")
    evaluation = task.evaluate(index, {"tldr": task.items[index].reference, "detail": TLDR_DETAILS["t3_23za1b"]})
    assert set(evaluation.reward.components) == {"structure", "style", "coherence", "rouge"}
    assert evaluation.reward.total == pytest.approx(3.7915, abs=1e-4)


def test_word_weights_do_not_depend_on_the_split(data_dir):
    test_task = llm_coop_envs.make("tldr-v2", split="test").task
    all_task = llm_coop_envs.make("tldr-v2", split="all").task
    task_id = test_task.task_id(0)
    replies = {"tldr": test_task.items[0].reference, "detail": test_task.items[0].source[:400]}
    assert test_task.evaluate(0, replies).reward == all_task.evaluate(index_of(all_task, task_id), replies).reward
