"""Any strings: no exception, a finite reward, and no hang on long texts."""

import pytest

from llm_coop_envs.writing import text_metrics as tm

JUNK = [
    "",
    " \n\t",
    "\x00\x01\x02\xff binary \x7f",
    "\ufffd lone surrogate replaced \ufffd",
    "🙂" * 1000,
    "x" * 100_000,
    "word " * 20_000,
    "Привет мир, это текст. " * 2000,
    "the " * 25_000,
    "a" * 30 + " " + "b" * 45,
]


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
@pytest.mark.parametrize("junk", JUNK, ids=range(len(JUNK)))
def test_junk_never_raises(genuine, env_name, junk):
    task, pairs = genuine[env_name]
    genuine_first = next(iter(pairs.values()))[0]
    for replies in ((junk, junk), (genuine_first, junk), (junk, genuine_first)):
        evaluation = task.evaluate(0, dict(zip(task.agents, replies)))
        assert 0.0 <= evaluation.reward.total <= task.max_reward()
        assert all(isinstance(text, str) and text for text in evaluation.feedback.values())


@pytest.mark.timeout(60)  # a guard against super-linear scoring, not a speed measurement
def test_long_real_text_is_scored_without_hanging(genuine):
    task, pairs = genuine["arxiv"]
    background, method = pairs["0704.0460"]
    long_text = (background + " ") * 60  # ~100k characters of real words
    for replies in ((long_text, method), (background, long_text), (long_text, long_text)):
        evaluation = task.evaluate(0, dict(zip(task.agents, replies)))
        assert 0.0 <= evaluation.reward.total <= task.max_reward()


def test_text_metrics_basics():
    assert tm.words("Don't STOP, it's 2 u") == ["dont", "stop", "its", "2", "u"]
    assert tm.content_stems(tm.words("The runners were running quickly 42")) == {"runner", "run", "quickli"}
    assert tm.jaccard(set(), set()) == 0.0 and tm.jaccard({"a"}, {"a", "b"}) == 0.5
    assert tm.distinct_ratio([]) == 0.0 and tm.distinct_ratio(["a"] * 4) == 0.25
    assert tm.copied_fraction(["a", "b"], {("a", "b", "c", "d")}, 4) == 0.0
    found = tm.transitions(tm.words("Most importantly, in other words, as a result of this, however"))
    assert found == [("most importantly", "emphasis"), ("in other words", "clarification"), ("as a result", "cause_effect"), ("however", "contrast")]
