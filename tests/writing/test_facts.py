"""The exact fact checks of the -v3 writing rewards: statements the source makes that a text denies in other words."""

import pytest

from benchmarks.writing import facts_audit
from benchmarks.writing.hostile import corrupt
from llm_coop_envs.writing import facts

SUPERNOVA = (
    "We construct similarity rebound shocks around the central degenerate core. The intense magnetic field of the "
    "remnant compact star as compared to that of the progenitor star is mainly attributed to both the gravitational "
    "core collapse and the radial distribution of magnetic field."
)
NETWORKS = (
    "For this purpose, we introduce the relative perturbation norm of the weights as an index. This study revealed "
    "new interesting statistical regularities in terms of the relative perturbation norm useful for the "
    "characterization of weighted graphs."
)
DOG = (
    "I told her to keep him until the end of this year and I would take him back but he managed to get out of his "
    "yard today and got locked up by animal control. He doesn't bark, he's great with kids!"
)


@pytest.mark.parametrize(("source", "denied", "honest", "finding"), [
    (SUPERNOVA, "As a result, the strong field of the remnant compact star is not explained mainly by the "
                "gravitational collapse of the core.",
     "As a result, the strong field of the remnant compact star is explained mainly by the gravitational collapse of "
     "the core.", "not explain"),
    (NETWORKS, "Consequently, they find new statistical regularities when the clustering coefficients are not "
               "expressed in terms of this norm.",
     "Consequently, they find new statistical regularities when the clustering coefficients are expressed in terms of "
     "this norm.", "not express"),
    # "would" makes another clause of the source's sentence hypothetical, not the one the text denies; "yard" is
    # said in that source sentence only, enough to tie the statement to it
    (DOG, "Meanwhile, he escaped from the yard and was not caught by animal control.",
     "Meanwhile, he escaped from the yard and was caught by animal control.", "not caught"),
])
def test_a_statement_the_source_makes_plainly_is_caught_when_the_text_denies_it(source, denied, honest, finding):
    assert facts.denied_statements(denied, source) == [finding]
    assert finding in facts.fact_problems(denied, source)["flipped"]
    assert facts.denied_statements(honest, source) == []
    assert facts.fact_problems(honest, source)["flipped"] == []


@pytest.mark.parametrize(("source", "text"), [
    # an attitude is denied, not the source's statement
    ("I feel that she will be found out and I will end up being a bad guy in all this.",
     "I don't want to end up being the bad guy in all this."),
    # the source denies it with a word that is not a negation
    ("In March my dad moved out and has since refused to pay any child support other than the minimum.",
     "My dad moved out so he doesn't have to pay child support."),
    ("I'm just finding it really hard to find the right wording that lets her know.",
     "I have to do the right thing but can't find the words."),
    # the text copies a sentence the source denies, next to one that says the words plainly
    ("For the typical range of mass ratios the final stage of the merger is preceded by a spin flip of the black hole. "
     "The distance of the black hole merger does not depend on the mass ratio.",
     "The distance of the black hole merger does not depend on the mass ratio."),
    # a negation after the phrase denies the source's statement too
    ("A known necessary condition for an interpolant, given that the data are non-derogatory, is not sufficient.",
     "The authors give a necessary condition for an interpolant that is not restricted to non-derogatory data."),
    # hypothetical, hedged, questioned or partial negations assert no denial
    (DOG, "If he is not caught by animal control, he will come back from the yard."),
    (DOG, "He escaped from the yard and may not be caught by animal control."),
    (DOG, "He escaped from the yard, so why was he not caught by animal control?"),
    (SUPERNOVA, "The field of the remnant compact star is not only explained by the gravitational collapse of the "
                "core."),
    (SUPERNOVA, "Not all of the field of the remnant compact star is mainly due to the gravitational core collapse."),
    # statements the source does not make are not held against the text
    (SUPERNOVA, "The field of the remnant compact star is not produced by accretion of the progenitor's envelope."),
    ("The shape of the form factor has been measured in a model independent analysis.",
     "The authors measure the shape of the form factor without assuming a particular model."),
    # the same words in a different order: not the same statement
    (NETWORKS, "The relative perturbation norm does not reveal new statistical regularities."),
])
def test_negations_that_deny_no_plain_source_statement_are_not_flagged(source, text):
    assert facts.denied_statements(text, source) == []


def test_a_denial_already_found_word_by_word_counts_once():
    source = "I will customize a 3D ultrasound to trick your friends into believing that you are pregnant."
    text = "He customises a 3D ultrasound so that buyers can not trick friends into believing they are pregnant."
    assert facts.fact_problems(text, source)["flipped"] == ["not trick"]


@pytest.fixture(scope="module")
def audit(data_dir):
    return {kind: facts_audit.load(kind, data_dir) for kind in ("tldr", "arxiv")}


def test_no_genuine_pair_and_no_dataset_tldr_denies_its_source(audit):
    for kind, items in audit.items():
        for sid, (pair, source) in facts_audit.pairs(kind, items).items():
            assert [facts.denied_statements(t, source) for t in pair] == [[], []], sid
    flagged = [item.id for item in audit["tldr"]
               if facts.denied_statements(item.reference or "", facts_audit.source_of(item))]
    assert flagged == []


def test_corrupted_facts_are_found_on_the_sources_where_only_negations_change(audit):
    # consistency fails at two disagreements; on these sources the corrupted pair changes (almost) only negations
    found = {}
    for kind, items in audit.items():
        for sid, (pair, source) in facts_audit.pairs(kind, items).items():
            corrupted = (corrupt(pair[0], source), corrupt(pair[1], source))
            found[sid] = len(facts_audit.pair_found(kind, corrupted, source))
            assert facts_audit.pair_found(kind, pair, source) == [], sid
    assert found["t3_ssx5f"] >= 2
    assert found["0704.0223"] >= 1 and found["0704.0686"] >= 1
    assert min(n for sid, n in found.items() if sid not in ("t3_16d1zi", "0704.0223", "0704.0686")) >= 2
