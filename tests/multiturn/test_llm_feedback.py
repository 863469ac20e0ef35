"""The "llm" provider against a real local HTTP reviewer: answers, failures, retries, secrets, threads."""

import copy
import json
import pickle
import socket
import threading
import time

import pytest

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.feedback import PlainFeedback, is_deterministic
from llm_coop_envs.feedback.llm import LLMFeedback
from tests.multiturn.reviewer_server import completion, hang, raw, reviewer_server, status, suggestions
from tests.toy_task import SecretWordTask

SECRET = "sk-test-0123456789abcdef"
GOOD = {"first": "Say apple, nothing else.", "second": "Your word is apple."}
FALLBACK_NOTE = "this is the automatic feedback instead"


def make_env(url, num_turns=2, **options):
    options = {"model": "reviewer-1", "api_key_env": "TEST_REVIEWER_KEY", "backoff_s": 0.0, **options}
    return CoopEnv(SecretWordTask(), num_turns=num_turns, feedback="llm", feedback_options={"base_url": url, **options})


def first_turn(env, replies=None):
    env.reset(seed=0, options={"index": 0})
    return env.step(replies or {"first": "pear", "second": "plum"})


@pytest.fixture(autouse=True)
def reviewer_key(monkeypatch):
    monkeypatch.setenv("TEST_REVIEWER_KEY", SECRET)


def test_suggestions_reach_each_agent_and_the_request_holds_the_joint_work():
    with reviewer_server(suggestions(GOOD)) as server:
        observations, rewards, terminations, _, infos = first_turn(make_env(server.url))
    assert infos["first"]["feedback"] == GOOD["first"] and infos["second"]["feedback"] == GOOD["second"]
    assert "Feedback on your joint work:\nYour word is apple." in observations["second"]
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["model"] == "reviewer-1"
    assert request["temperature"] == 0.0 and request["max_tokens"] > 0
    user_message = request["messages"][-1]["content"]
    assert "pear" in user_message and "plum" in user_message  # both agents' replies: the joint work
    assert "missing the word 'apple'" in user_message  # the task's own checks help the reviewer
    assert not any(terminations.values()) and rewards["first"] == 0.0


def test_api_key_is_sent_as_bearer_and_never_shown():
    echo = completion(json.dumps({"first": f"I was given {SECRET}", "second": "ok"}))
    with reviewer_server(echo, suggestions(GOOD)) as server:
        env = make_env(server.url, num_turns=3)
        observations, *_, infos = first_turn(env)
        env.step({"first": "x", "second": "y"})
    assert [h["Authorization"] for h in server.headers] == [f"Bearer {SECRET}"] * 2
    visible = json.dumps([observations, infos]) + env.transcript() + repr(env.feedback) + repr(vars(env.feedback))
    assert SECRET not in visible and "[hidden]" in infos["first"]["feedback"]


def test_no_key_variable_sends_no_authorization(monkeypatch):
    monkeypatch.delenv("TEST_REVIEWER_KEY")
    with reviewer_server(suggestions(GOOD)) as server:
        first_turn(make_env(server.url))
    assert "Authorization" not in server.headers[0]


@pytest.mark.parametrize(
    "behaviour, reason",
    [
        (raw(b"<html>Bad gateway</html>"), "not a chat completion"),
        (completion("Looks great to me, keep going!"), "no JSON suggestion"),
        (completion('["a list", "not an object"]'), "no JSON suggestion"),
        (status(401), "HTTP 401"),
        (completion("x" * 5_000), "larger than 2000 bytes"),
    ],
)
def test_garbage_answers_fall_back_to_tests_feedback_without_retrying(behaviour, reason):
    with reviewer_server(behaviour) as server:
        *_, infos = first_turn(make_env(server.url, max_retries=2, max_response_bytes=2_000))
    feedback = infos["first"]["feedback"]
    assert feedback.startswith("missing the word 'apple'") and reason in feedback and FALLBACK_NOTE in feedback
    assert len(server.requests) == 1


def test_hanging_reviewer_times_out_retries_then_falls_back():
    with reviewer_server(hang(10.0)) as server:
        start = time.monotonic()
        *_, infos = first_turn(make_env(server.url, timeout_s=0.3, max_retries=1))
        elapsed = time.monotonic() - start
    assert len(server.requests) == 2 and elapsed < 3.0
    assert "no answer within 0.3 s" in infos["second"]["feedback"] and FALLBACK_NOTE in infos["second"]["feedback"]


def test_server_error_is_retried_then_the_answer_is_used():
    with reviewer_server(status(500), status(503), suggestions(GOOD)) as server:
        *_, infos = first_turn(make_env(server.url, max_retries=2))
    assert len(server.requests) == 3 and infos["first"]["feedback"] == GOOD["first"]


def test_unreachable_endpoint_falls_back():
    with socket.socket() as probe:  # a port that nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    *_, infos = first_turn(make_env(f"http://127.0.0.1:{port}/v1", max_retries=0))
    assert "cannot reach the endpoint" in infos["first"]["feedback"]


def test_agent_the_reviewer_forgot_gets_the_fallback_text():
    fenced = 'Here you go:\n```json\n{"Second": "Write apple."}\n```\nGood luck!'
    with reviewer_server(completion(fenced)) as server:
        *_, infos = first_turn(make_env(server.url))
    assert infos["second"]["feedback"] == "Write apple."
    assert infos["first"]["feedback"].startswith("missing the word 'apple'")
    assert "no suggestion for you" in infos["first"]["feedback"]


def test_final_turn_skips_the_reviewer_unless_asked():
    with reviewer_server(suggestions(GOOD)) as server:
        *_, infos = first_turn(make_env(server.url, num_turns=1))
        assert server.requests == [] and "final turn" in infos["first"]["feedback"]
        *_, infos = first_turn(make_env(server.url, num_turns=1, review_final_turn=True))
        assert len(server.requests) == 1 and infos["first"]["feedback"] == GOOD["first"]


def test_custom_fallback_provider_is_used():
    with reviewer_server(status(400)) as server:
        *_, infos = first_turn(make_env(server.url, fallback=PlainFeedback("Try again.")))
    assert infos["first"]["feedback"].startswith("Try again.\n(reviewer unavailable: HTTP 400")


def test_endpoint_and_model_from_environment_variables(monkeypatch):
    with reviewer_server(suggestions(GOOD)) as server:
        monkeypatch.setenv("LLM_COOP_FEEDBACK_BASE_URL", server.url + "/")
        monkeypatch.setenv("LLM_COOP_FEEDBACK_MODEL", "from-env")
        env = CoopEnv(SecretWordTask(), num_turns=2, feedback="llm", feedback_options={"backoff_s": 0.0})
        *_, infos = first_turn(env)
    assert server.requests[0]["model"] == "from-env" and infos["first"]["feedback"] == GOOD["first"]


def test_missing_configuration_says_how_to_fix(monkeypatch):
    for name in ("LLM_COOP_FEEDBACK_BASE_URL", "OPENAI_BASE_URL", "LLM_COOP_FEEDBACK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="LLM_COOP_FEEDBACK_BASE_URL"):
        LLMFeedback(model="m")
    with pytest.raises(ValueError, match="LLM_COOP_FEEDBACK_MODEL"):
        LLMFeedback(base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize(
    "options",
    [{"base_url": "ftp://x"}, {"timeout_s": 0}, {"max_retries": -1}, {"max_tokens": 0}, {"backoff_s": -1.0}],
)
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        LLMFeedback(**{"base_url": "http://127.0.0.1:1/v1", "model": "m", **options})


def test_provider_is_flagged_non_deterministic_and_copies_cheaply():
    provider = LLMFeedback("http://127.0.0.1:1/v1", "m")
    assert provider.deterministic is False and not is_deterministic(provider)
    assert copy.deepcopy(provider) is provider
    assert pickle.loads(pickle.dumps(provider)).config == provider.config  # e.g. for process pools
    env = CoopEnv(SecretWordTask(), feedback=provider)
    assert copy.deepcopy(env).feedback is provider


def test_env_copies_stepped_from_parallel_threads_share_one_reviewer():
    with reviewer_server(suggestions(GOOD)) as server:
        env = make_env(server.url)
        env.reset(seed=0, options={"index": 0})
        copies = [copy.deepcopy(env) for _ in range(8)]
        results = [None] * len(copies)

        def step(i):
            results[i] = copies[i].step({"first": f"try {i}", "second": "plum"})[-1]

        threads = [threading.Thread(target=step, args=(i,)) for i in range(len(copies))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    assert all(infos["first"]["feedback"] == GOOD["first"] for infos in results)
    sent = [request["messages"][-1]["content"] for request in server.requests]
    assert len(sent) == 8 and all(any(f"try {i}" in text for text in sent) for i in range(8))
