import pytest

from benchmarks.metrics.writing import length_ratio, overlap, rouge, writing_metrics


def test_rouge_identity_and_empty():
    assert rouge("the cat sat on the mat", "the cat sat on the mat")["rougeL"] == pytest.approx(1.0)
    assert rouge("", "anything") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    assert 0 < rouge("a cat sat", "the cat sat on the mat")["rouge1"] < 1


def test_length_ratio_and_overlap():
    assert length_ratio("one two", "one two three four") == 2.0
    assert length_ratio("", "words") == 0.0
    assert overlap("Cats running fast", "a cat runs") == pytest.approx(2 / 3)
    assert overlap("", "") == 0.0


def test_joint_metrics():
    metrics = writing_metrics({"a": "short summary", "b": "a much longer summary here"}, ("a", "b"), "summary")
    assert metrics["length_ratio"] == 2.5
    assert set(metrics) == {"length_ratio", "overlap", "rouge1", "rouge2", "rougeL"}
    assert "rouge1" not in writing_metrics({"a": "x"}, ("a", "b"))


@pytest.mark.parametrize("junk", ["\x00\x01", "é" * 10_000, "   ", "🙂" * 50])
def test_junk_never_raises(junk):
    writing_metrics({"a": junk, "b": junk}, ("a", "b"), junk)
