"""The optional grader level against a real local OpenAI-compatible server on 127.0.0.1."""

import json

import pytest

from llm_coop_envs.writing import arxiv_intro, tldr
from llm_coop_envs.writing.grader import GraderConfig, GraderError, WritingGrader, parse_grades
from tests.multiturn.reviewer_server import completion, hang, raw, reviewer_server, status
from tests.writing.conftest import index_of
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS

GRADES = {"structure": 5, "style": 4, "coherence": 3}


def grader_env(url, **options):
    return tldr.env_v2(split="all", grader={"base_url": url, "model": "grader-model", "api_key_env": None, **options})


def genuine_tldr(task):
    task_id, detail = next(iter(TLDR_DETAILS.items()))
    index = index_of(task, task_id)
    return index, {"tldr": task.items[index].reference, "detail": detail}


def test_off_by_default(data_dir):
    task = tldr.env_v2(split="test").task
    assert task.grader is None and "grader" not in task.component_names()


def test_grades_become_the_grader_component_and_the_request_shows_source_and_texts(data_dir):
    with reviewer_server(completion(json.dumps(GRADES))) as server:
        task = grader_env(server.url).task
        index, replies = genuine_tldr(task)
        evaluation = task.evaluate(index, replies)
    assert evaluation.reward.components["grader"] == pytest.approx((1.0 + 0.75 + 0.5) / 3)
    assert evaluation.details["grader"] == {
        "scores": {"structure": 1.0, "style": 0.75, "coherence": 0.5}, "error": None, "cached": False, "sent": True
    }
    assert task.max_reward() == 7.0
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["model"] == "grader-model"
    prompt = request["messages"][-1]["content"]
    assert task.items[index].source[:200] in prompt and replies["detail"] in prompt and replies["tldr"] in prompt
    assert "adds the details, reasons and context" in prompt
    assert "Grader grades (0-1): structure 1.00, style 0.75, coherence 0.50." in evaluation.feedback["detail"]


def test_same_pair_is_graded_once(data_dir):
    with reviewer_server(completion(json.dumps(GRADES))) as server:
        task = grader_env(server.url).task
        index, replies = genuine_tldr(task)
        first, second = task.evaluate(index, replies), task.evaluate(index, replies)
        assert len(server.requests) == 1
    assert second.details["grader"]["cached"] and first.reward.total == second.reward.total


def test_failed_gates_send_nothing(data_dir):
    with reviewer_server(completion(json.dumps(GRADES))) as server:
        task = grader_env(server.url).task
        evaluation = task.evaluate(0, {"tldr": "", "detail": ""})
        assert server.requests == []
    assert evaluation.reward.components["grader"] == 0.0 and evaluation.details["grader"]["sent"] is False


@pytest.mark.parametrize(
    "behaviour,reason",
    [
        (completion("I think it is quite good."), "no JSON object"),
        (completion('{"structure": 5, "style": 4}'), "'coherence'"),
        (completion('{"structure": 9, "style": 4, "coherence": 3}'), "'structure'"),
        (completion('{"structure": "5", "style": 4, "coherence": 3}'), "'structure'"),
        (raw(b"not json at all"), "not a chat completion"),
        (status(500), "HTTP 500"),
        (status(401), "HTTP 401"),
    ],
)
def test_malformed_replies_and_errors_score_zero_with_the_reason_and_are_not_cached(data_dir, behaviour, reason):
    with reviewer_server(behaviour, completion(json.dumps(GRADES))) as server:
        task = grader_env(server.url, max_retries=0).task
        index, replies = genuine_tldr(task)
        failed = task.evaluate(index, replies)
        retried = task.evaluate(index, replies)
    assert failed.reward.components["grader"] == 0.0
    assert reason in failed.details["grader"]["error"]
    assert "Grader: no grades" in failed.feedback["tldr"]
    assert failed.reward.total == pytest.approx(failed.details["level_reward"], abs=1e-4)
    assert retried.details["grader"]["error"] is None and retried.reward.components["grader"] > 0


def test_a_silent_endpoint_times_out(data_dir):
    with reviewer_server(hang(30)) as server:
        task = grader_env(server.url, timeout_s=0.3, max_retries=0).task
        index, replies = genuine_tldr(task)
        evaluation = task.evaluate(index, replies)
    assert "no answer within 0.3 s" in evaluation.details["grader"]["error"]


def test_unreachable_endpoint_and_raise_mode(data_dir):
    with reviewer_server(status(200)) as server:
        url = server.url
    task = grader_env(url, max_retries=0, on_error="raise").task
    index, replies = genuine_tldr(task)
    with pytest.raises(GraderError, match="grader unavailable"):
        task.evaluate(index, replies)


def test_arxiv_grader_and_api_key_from_the_named_variable(data_dir, monkeypatch):
    monkeypatch.setenv("GRADER_TEST_KEY", "sk-test-1234")
    task_id, pair = next(iter(ARXIV_PAIRS.items()))
    with reviewer_server(completion("```json\n" + json.dumps(GRADES) + "\n```")) as server:
        options = {"base_url": server.url, "model": "m", "api_key_env": "GRADER_TEST_KEY"}
        task = arxiv_intro.env_v2(split="all", grader=options).task
        evaluation = task.evaluate(index_of(task, task_id), dict(zip(task.agents, pair)))
    assert server.headers[0]["Authorization"] == "Bearer sk-test-1234"
    assert evaluation.reward.components["grader"] == pytest.approx(0.75)
    assert "sk-test-1234" not in json.dumps(evaluation.details, default=dict) + str(evaluation.feedback)


def test_config_is_validated():
    with pytest.raises(ValueError, match="http"):
        GraderConfig(base_url="localhost:8000", model="m")
    with pytest.raises(ValueError, match="on_error"):
        GraderConfig(base_url="http://x", model="m", on_error="ignore")
    with pytest.raises(TypeError, match="grader must be"):
        WritingGrader.coerce("http://x")


def test_parse_grades_scale():
    assert parse_grades('Sure! {"structure": 1, "style": 5, "coherence": 3.0}') == {"structure": 0.0, "style": 1.0, "coherence": 0.5}
    with pytest.raises(GraderError):
        parse_grades('{"structure": true, "style": 5, "coherence": 3}')


def test_the_old_names_are_gone_with_a_clear_error(data_dir):
    import llm_coop_envs.writing as writing

    with pytest.raises(TypeError, match="grader="):
        tldr.env_v2(split="test", judge={"base_url": "http://127.0.0.1:9", "model": "m"})
    with pytest.raises(ValueError, match="Unknown reward weight"):
        tldr.env_v2(split="test", reward_weights={"judge": 2.0})
    for old in ("JudgeConfig", "WritingJudge", "JudgeError"):
        assert not hasattr(writing, old)
