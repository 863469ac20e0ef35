"""Reading the reviewer's answer: JSON in many wrappings, never an exception."""

import pytest

from llm_coop_envs.core import Evaluation, RewardResult
from llm_coop_envs.feedback import FeedbackContext
from llm_coop_envs.feedback.review_prompt import parse_suggestions, review_messages

AGENTS = ("helper", "main")


@pytest.mark.parametrize(
    "answer",
    [
        '{"helper": "fix the loop", "main": "call helper"}',
        'Sure!\n```json\n{"helper": "fix the loop", "main": "call helper"}\n```\nHope it helps.',
        '```\n{"helper": "fix the loop", "main": "call helper"}\n```',
        'My review: {"helper": "fix the loop", "main": "call helper"} -- done',
        '{"suggestions": {"Helper": "fix the loop", "MAIN": "call helper"}}',
        '{"note": "x"} then {"helper": "fix the loop", "main": "call helper"}',
    ],
)
def test_suggestions_are_found_in_common_wrappings(answer):
    assert parse_suggestions(answer, AGENTS) == {"helper": "fix the loop", "main": "call helper"}


def test_lists_become_bullets_and_missing_or_empty_agents_are_absent():
    answer = '{"helper": ["rename x", "add a docstring"], "main": "  ", "other": "ignored"}'
    assert parse_suggestions(answer, AGENTS) == {"helper": "- rename x\n- add a docstring"}


@pytest.mark.parametrize(
    "answer",
    ["", "no json at all", "{not json}", "[" * 100_000, "{" * 100_000, '{"helper": ', '["helper", "main"]', "\ud800{"],
)
def test_junk_answers_give_no_suggestions(answer):
    assert parse_suggestions(answer, AGENTS) == {}


def test_review_request_shows_instructions_replies_and_checks_clipped():
    evaluation = Evaluation(
        RewardResult.from_components({"syntax": 1.0, "tests": 0.25}), feedback={"main": "assert 1 failed"}
    )
    context = FeedbackContext(
        task_id="HumanEval/0",
        turn=1,
        num_turns=2,
        prompts={"helper": "Write helper.", "main": "Write main."},
        replies={"helper": "def helper(): pass", "main": "y" * 50},
        evaluation=evaluation,
    )
    system, user = review_messages(context, max_chars=20, include_checks=True)
    assert '{"helper": "...", "main": "..."}' in system["content"]
    text = user["content"]
    assert "Write helper." in text and "def helper(): pass" in text and "assert 1 failed" in text
    assert "30 more characters not shown" in text and "turn 1 of 2" in text
    _, bare = review_messages(context, max_chars=20, include_checks=False)
    assert "assert 1 failed" not in bare["content"]
