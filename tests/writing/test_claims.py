"""The -v5 claim check against real parses (spaCy's small English pipeline, pint, WordNet 3.0)."""

import pytest

pytest.importorskip("spacy")
pytest.importorskip("pint")

from llm_coop_envs.writing.antonyms import antonyms, opposed  # noqa: E402
from llm_coop_envs.writing.claims import check  # noqa: E402
from llm_coop_envs.writing.normalise import fold, invisible  # noqa: E402

POST = ("My sister (24F) and I (27M) share a flat. My roommate Jake keeps eating my food even though I asked him "
        "twice to stop. The heater draws 3mA and has been broken for two weeks. I am not a particularly loud person, "
        "and I rarely complain. I don't want my neighbor to suffer. Our landlord may raise the rent next year.")
ABSTRACT = ("Scooters with swappable batteries lasted longer than those with fixed batteries. "
            "The Hubble Space Telescope observed 3 galaxies over two weeks.")


def kinds(text: str, source: str = POST) -> list[str]:
    return [verdict.kind for verdict in check(text, source)]


@pytest.mark.parametrize("text", [
    "It is unlikely that Jake eats my food.",  # a hedged contradiction
    "Did Jake stop eating my food after I asked him twice?",  # a question that flips the fact
    "The heater draws three amperes and has been broken for two weeks.",  # a unit changed
    "The heater draws 3mA and has been broken for two months.",
    "My sister (27F) and I (24M) share a flat.",  # values swapped between slots
    "I complain often.",  # an antonym from WordNet
    "Our landlord will definitely raise the rent next year.",  # certainty inflated
])
def test_each_flipped_fact_is_contradicted(text):
    assert "contradicted" in kinds(text), check(text, POST)


def test_reversed_comparison_is_contradicted():
    assert "contradicted" in kinds("Scooters with fixed batteries lasted longer than those with swappable batteries.",
                                   ABSTRACT)


def test_fabricated_claim_is_unsupported():
    assert kinds("Jake plays guitar in a jazz band every weekend.") == ["unsupported"]


@pytest.mark.parametrize("text, source", [
    ("I do not think I am loud.", POST),  # the -v4 false alarms of the issue
    ("I want to live comfortably.", POST),
    ("HST observed three galaxies over two weeks.", ABSTRACT),
    ("The heater, which draws 3 mA, has not worked for two weeks.", POST),
    ("Jake eats my food although I told him to stop.", POST),
])
def test_honest_paraphrases_are_not_contradicted(text, source):
    assert "contradicted" not in kinds(text, source), check(text, source)


def test_any_string_gets_verdicts_without_raising():
    for text in ["", "   ", "?!", "1" * 500, "\u200b" * 50, "é" * 3000, "the " * 2000, "he ran and " * 2000]:
        assert isinstance(check(text, POST), list)


def test_wordnet_antonyms_beyond_a_hand_list():
    assert opposed("near", "far") and opposed("rare", "common") and opposed("resolved", "unresolved")
    assert opposed("decrease", "increase") and not opposed("loud", "person")
    assert antonyms("no-such-word") == frozenset()


def test_fold_maps_look_alikes_and_drops_invisible_characters():
    assert fold("p\u0251per \u0261ood \u0131t \u1d0fk p\u0430per") == "paper good it ok paper"
    assert fold("zero\u200dwidth\u2060joined") == "zerowidthjoined"
    assert invisible("zero\u200dwidth\u2060joined\ufe0f") == 3 and invisible("plain text, café") == 0
    assert fold("Imam rn") == "Imam rn"  # ASCII is never remapped (UTS #39 maps "m" to "rn")


def test_false_alarms_on_the_hand_written_honest_pairs_stay_at_most_five_percent():
    from benchmarks.writing.claims_check import load_items, measure
    from benchmarks.writing.text_jobs_check import measure as text_jobs_measure

    items = load_items()
    assert len(items) >= 40
    assert measure(items)["false_alarm_pairs"] <= 0.05 * len(items)
    assert text_jobs_measure(items)["honest_texts_flagged"] == 0
