"""Each level's boundary numbers, on constructed texts whose measurements are known exactly."""

import dataclasses

import pytest

from llm_coop_envs.writing import ARXIV_LEVELS, TLDR_LEVELS, Band
from llm_coop_envs.writing.reward import PairTexts, score_pair

SOURCE = "an unrelated source text about gardening tomatoes in spring"


def distinct(n: int, tag: str) -> str:
    """n distinct content words (none is a stopword or a transition)."""
    return " ".join(f"{tag}word{i}x" for i in range(n))


def score(first: str, second: str, config=TLDR_LEVELS, source: str = SOURCE, reference=None):
    return score_pair(PairTexts(("tldr", "detail"), (first, second), source, "post"), config, reference)


def structure(result) -> float:
    return result.level_scores()["structure"]


@pytest.mark.parametrize("n,ok", [(7, False), (8, True), (100, True), (101, False)])
def test_first_text_word_bounds(n, ok):
    # second text keeps the ratio inside the accepted band whatever n is
    result = score(distinct(n, "a"), distinct(int(n * 2.5), "b"))
    assert (structure(result) > 0) is ok, result.levels[0].message
    if not ok:
        assert f"has {n} words; it needs 8–100" in result.levels[0].message


@pytest.mark.parametrize("n,ok", [(15, False), (16, True), (300, True), (301, False)])
def test_second_text_word_bounds(n, ok):
    config = dataclasses.replace(TLDR_LEVELS, length_ratio=Band(0.0, 0.0, 100.0, 100.0))
    assert (structure(score(distinct(10, "a"), distinct(n, "b"), config)) > 0) is ok


@pytest.mark.parametrize(
    "second_words,expected",
    [(10, 0.5), (11, 0.5), (12, 0.5 + 0.5 * 0.2), (16, 1.0), (32, 1.0), (41, 0.5 + 0.5 * 0.5), (50, 0.5), (51, 0.5)],
)
def test_length_ratio_band_tldr(second_words, expected):
    # ratio = second / 10: 1.0 and 5.1 fail (structure 0.5, stop); 1.1 and 5.0 are the edges (0 credit);
    # 1.2 is 20 % up the ramp; 1.6-3.2 full; 4.1 halfway down.
    config = dataclasses.replace(TLDR_LEVELS, second_words=(1, 300))
    result = score(distinct(10, "a"), distinct(second_words, "b"), config)
    assert structure(result) == pytest.approx(expected)
    ratio = second_words / 10
    assert (len(result.levels) > 1) is (1.1 <= ratio <= 5.0)


@pytest.mark.parametrize("ratio,expected", [(0.49, 0.5), (0.5, 0.5), (0.8, 1.0), (1.0, 1.0), (1.25, 1.0), (2.0, 0.5), (2.01, 0.5)])
def test_length_ratio_band_arxiv(ratio, expected):
    config = dataclasses.replace(ARXIV_LEVELS, first_words=(1, 1000), second_words=(1, 1000))
    result = score_pair(PairTexts(("background", "method"), (distinct(100, "a"), distinct(round(100 * ratio), "b")), SOURCE, "abstract"), config)
    assert structure(result) == pytest.approx(expected)
    assert (len(result.levels) > 1) is (0.5 <= ratio <= 2.0)


def test_degenerate_text_fails_at_min_distinct_ratio():
    # 30 words: 9 distinct -> 0.30 passes, 8 distinct -> 0.27 fails
    def repeated(k: int) -> str:
        return " ".join(f"w{i % k}x" for i in range(30))

    assert structure(score(distinct(20, "a"), repeated(9))) > 0
    failed = score(distinct(20, "a"), repeated(8))
    assert structure(failed) == 0 and "repeats itself (only 27% of its words are distinct" in failed.levels[0].message


def test_copy_gate_threshold():
    source = distinct(200, "s")
    own = distinct(40, "o").split()
    copied = source.split()
    # 40 words -> 37 4-grams; the first k words copied give k-3 copied 4-grams
    half = " ".join(copied[:21] + own[:19])  # 18/37 = 0.486 copied -> passes
    over = " ".join(copied[:23] + own[:17])  # 20/37 = 0.54 -> fails
    assert structure(score(distinct(16, "a"), half, source=source)) > 0
    failed = score(distinct(16, "a"), over, source=source)
    assert structure(failed) == 0 and "copies the post (54% of its 4-word sequences" in failed.levels[0].message


def test_structure_gate_failure_zeroes_rouge_too():
    result = score("", distinct(30, "b"), reference="a reference summary")
    assert result.rouge is None and result.level_scores() == {"structure": 0.0, "style": 0.0, "coherence": 0.0}


def shared_pair(shared: int, total_first: int = 20, total_second: int = 40) -> tuple[str, str]:
    """Two texts sharing `shared` content words: J = shared / (total_first + total_second - shared)."""
    common = distinct(shared, "c")
    return (f"{common} {distinct(total_first - shared, 'a')}", f"{common} {distinct(total_second - shared, 'b')}")


@pytest.mark.parametrize(
    "shared,expected_j,expected_score,continues",
    [(0, 0.0, 0.0, True), (2, 2 / 58, 0.0345 / 0.05, True), (6, 6 / 54, 1.0, True), (20, 0.5, (0.6 - 0.5) / 0.25, True)],
)
def test_style_band_tldr(shared, expected_j, expected_score, continues):
    result = score(*shared_pair(shared))
    assert result.metrics["overlap"] == pytest.approx(expected_j, abs=1e-4)
    assert result.level_scores()["style"] == pytest.approx(expected_score, abs=2e-3)
    assert (len(result.levels) == 3) is continues


def test_style_fails_above_060_and_below_arxiv_minimum():
    # 30 and 34 words, 28 shared: J = 28/36 = 0.78 > 0.60 -> fails, scoring stops
    common = distinct(28, "c")
    result = score(f"{common} {distinct(2, 'a')}", f"{common} {distinct(6, 'b')}")
    assert result.metrics["overlap"] > 0.6 and len(result.levels) == 2 and not result.levels[1].passed
    assert "repeat each other" in result.levels[1].message
    config = dataclasses.replace(ARXIV_LEVELS, first_words=(1, 1000), second_words=(1, 1000))
    low = score_pair(PairTexts(("background", "method"), shared_pair(1, 40, 40), SOURCE, "abstract"), config)
    assert low.metrics["overlap"] < 0.03 and not low.levels[1].passed and "hardly share a topic" in low.levels[1].message


def with_transitions(phrases: list[str], filler_words: int) -> tuple[str, str]:
    common = distinct(6, "c")
    first = f"{common} {distinct(14, 'a')}"
    second = f"{common} {distinct(filler_words, 'b')} " + " ".join(f"{p} {distinct(1, 'p' + str(i))}" for i, p in enumerate(phrases))
    return first, second


@pytest.mark.parametrize(
    "phrases,expected",
    [
        ([], 0.0),
        (["however"], 0.5),
        (["however", "however"], 0.5),
        (["however", "for example"], 0.8),
        (["however", "for example", "as a result"], 1.0),
        (["however", "for example", "as a result", "in conclusion"], 1.0),
    ],
)
def test_coherence_by_category_count(phrases, expected):
    result = score(*with_transitions(phrases, 30))
    assert result.level_scores()["coherence"] == pytest.approx(expected)


def test_ambiguous_words_and_substrings_are_not_transitions():
    text = "as if so then while since still first, bus assoc thusly howeverish unlessly"
    first, second = with_transitions([], 30)
    result = score(first, f"{second} {text}")
    assert result.metrics["transitions"] == []


def test_transition_density_band():
    # joint text of 20 + (6 + filler + 2k) words with k transitions of one category
    def coherence(k: int, filler: int) -> tuple[float, float]:
        result = score(*with_transitions(["however"] * k, filler))
        return result.level_scores()["coherence"], result.metrics["transition_density"]

    full, density = coherence(4, 46)  # 4 / 80 = 0.05
    assert full == 0.5 and density == pytest.approx(0.05, abs=1e-4)
    ramp, density = coherence(14, 46)  # 14 / 100 = 0.14: halfway between 0.08 and 0.20
    assert density == pytest.approx(0.14, abs=1e-4) and ramp == pytest.approx(0.25)
    spam, density = coherence(30, 10)  # 30 / 96 > 0.20 -> fails
    assert density > 0.2 and spam == 0.0


def test_solved_needs_every_level_at_full_credit():
    first, second = with_transitions(["however", "for example", "as a result"], 40)
    assert score(first, second).solved
    first, second = with_transitions(["however"], 40)
    assert not score(first, second).solved
