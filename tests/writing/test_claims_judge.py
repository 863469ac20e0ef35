"""The outside claims judge through a real local HTTP endpoint (an OpenAI-compatible stand-in on 127.0.0.1)."""

import json

import pytest

pytest.importorskip("spacy")

from llm_coop_envs.writing.claims_judge import RUBRIC, ClaimsJudge, judged  # noqa: E402
from llm_coop_envs.writing.grader import GraderConfig, GraderError  # noqa: E402
from tests.multiturn.reviewer_server import completion, reviewer_server, status  # noqa: E402

SOURCE = "My roommate Jake keeps eating my food even though I asked him twice to stop."
TEXT = "Jake eats my food. He plays in a band."


def judge(url: str, **options) -> ClaimsJudge:
    return ClaimsJudge(GraderConfig(base_url=url, model="judge-model", api_key_env=None, max_retries=0, **options))


def answer(*kinds: str) -> str:
    return json.dumps({"verdicts": [{"sentence": k, "verdict": kind, "reason": f"r{k}"} for k, kind in enumerate(kinds, 1)]})


def test_off_by_default_the_offline_check_answers():
    result = judged(TEXT, SOURCE)
    assert not result.judged and result.error is None and [v.kind for v in result.verdicts][0] == "supported"


def test_the_judge_gives_each_sentence_its_verdict_and_sees_source_rubric_and_numbered_sentences():
    with reviewer_server(completion("```json\n" + answer("supported", "contradicted") + "\n```")) as server:
        result = judged(TEXT, SOURCE, judge(server.url))
        again = judged(TEXT, SOURCE, judge(server.url))
    assert result.judged and [v.kind for v in result.verdicts] == ["supported", "contradicted"]
    assert result.verdicts[1].reason == "judge: r2"
    messages = server.requests[0]["messages"]
    assert messages[0]["content"] == RUBRIC
    assert SOURCE in messages[1]["content"] and "1. Jake eats my food." in messages[1]["content"]
    assert "2. He plays in a band." in messages[1]["content"] and again.judged


@pytest.mark.parametrize("behaviour, reason", [
    (completion("no json here"), "no JSON object"),
    (completion(answer("supported")), "no verdict for sentence(s) [2]"),
    (completion(json.dumps({"verdicts": [{"sentence": 1, "verdict": "maybe"}]})), "not {sentence"),
    (status(500), "unavailable"),
])
def test_an_unusable_answer_falls_back_to_the_offline_check_with_the_reason(behaviour, reason):
    with reviewer_server(behaviour) as server:
        result = judged(TEXT, SOURCE, judge(server.url))
    assert not result.judged and reason in result.error
    assert [v.kind for v in result.verdicts] == [v.kind for v in judged(TEXT, SOURCE).verdicts]


def test_raise_mode_raises():
    with reviewer_server(completion("{}")) as server:
        with pytest.raises(GraderError):
            judged(TEXT, SOURCE, judge(server.url, on_error="raise"))
