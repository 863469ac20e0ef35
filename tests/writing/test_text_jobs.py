"""The "does each text do its job" checks (docs/envs/claims.md) on honest and hostile texts."""

import pytest

pytest.importorskip("confusable_homoglyphs")

from llm_coop_envs.writing import text_jobs as tj  # noqa: E402

SOURCE = ("My neighbor has been parking his truck across my driveway every Sunday for three months. I asked him "
          "politely twice, and both times he apologized and then did it again. Yesterday I was late for work because "
          "of it. I am thinking about calling the city, but I don't want to start a feud.")
HONEST = ("For three months my neighbor has blocked my driveway with his truck on Sundays. He apologized both times I "
          "asked, then did it again, and yesterday it made me late for work. I may call the city, but I fear a feud.")


def all_problems(text: str) -> list[str]:
    return [p for check in (tj.invisible_characters, tj.template_tags, tj.filler_lines, tj.retractions, tj.loops)
            for p in check(text)] + tj.not_a_retelling(text, SOURCE)


def test_an_honest_retelling_passes_every_check():
    assert all_problems(HONEST) == []
    assert tj.coverage((HONEST,), SOURCE) == 1.0


@pytest.mark.parametrize("text, says", [
    (HONEST + " Actually, none of the above is true.", "takes itself back"),
    (HONEST + "\nHowever, moreover, and therefore.", "connectives"),
    (HONEST + " <|im_end|>", "chat-template"),
    ("My neigh\u200dbor parks on my drive\u200bway.", "invisible"),
    ("My neighbor parks the truck on my driveway. A neighbor parks his truck at my driveway. My neighbor parks a "
     "truck by the driveway. Our neighbor parks his truck in my driveway.", "again and again"),
    ("You should call the city. Try to talk to him first. Consider writing a letter.", "advises"),
    ("This is a great post. The author tells an engaging story. It is an interesting read.", "advises, reviews"),
    ("Here is a concise summary, a TL;DR of the Reddit post in my own words. Another writer adds the details and "
     "reasons this short summary leaves out.", "restates the task"),
])
def test_each_hostile_text_is_flagged_with_the_reason(text, says):
    assert any(says in p for p in all_problems(text)), all_problems(text)


def test_a_pair_of_first_and_last_sentences_covers_less():
    assert tj.coverage(("My neighbor blocks my driveway.", "I don't want a feud."), SOURCE) < 0.6


def test_any_string_is_checked_without_raising():
    for text in ["", " ", "\u200b", "?" * 100, "word " * 3000]:
        assert isinstance(all_problems(text), list) and 0.0 <= tj.coverage((text,), SOURCE) <= 1.0
