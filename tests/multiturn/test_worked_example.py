"""The docs' worked example: a buggy first turn, feedback, a fix; and the page shows its real transcript."""

import pytest

import llm_coop_envs
from tests.multiturn import worked_example
from tests.multiturn.envs import available_env_names
from tests.multiturn.reviewer_server import reviewer_server, suggestions

pytestmark = pytest.mark.skipif(
    "coop_humaneval-v2" not in available_env_names(), reason="the coding envs are not built yet"
)


def test_buggy_turn_gets_failed_asserts_and_the_fix_solves_and_ends_the_episode():
    _, [(rewards1, terms1, infos1), (rewards2, terms2, infos2)] = worked_example.play()
    assert not infos1["helper"]["solved"] and not any(terms1.values())
    assert "idden" not in infos1["helper"]["feedback"]  # v2: hidden tests never speak within an episode
    assert "- failed `assert candidate(15, 8, 5) == 5` (wrong result)" in infos1["helper"]["feedback"]  # public
    assert infos2["main"]["solved"] and all(terms2.values()) and rewards2["main"] > rewards1["main"]
    assert infos1["helper"]["turn"] == 1 and infos2["helper"]["turn"] == 2


def test_solved_work_keeps_going_without_early_stop():
    env = llm_coop_envs.make("coop_humaneval-v2", num_turns=3, stop_when_solved=False)
    env.reset(seed=0, options={"task_id": worked_example.TASK_ID})
    fixed = worked_example.TURNS[1]
    rewards = []
    while env.agents:
        _, reward, _, _, infos = env.step(fixed)
        rewards.append(reward["helper"])
        assert infos["helper"]["solved"]
    assert len(rewards) == 3 and len(set(rewards)) == 1


def test_plain_and_llm_feedback_in_the_example():
    _, [(_, _, infos), _] = worked_example.play(feedback="plain")
    assert infos["helper"]["feedback"] == "Revise your answer."
    advice = {"helper": "aux must test primality, not oddness; 1 and 2 are edge cases.", "main": "Looks right."}
    with reviewer_server(suggestions(advice)) as server:
        options = {"base_url": server.url, "model": "local", "api_key_env": None}
        env, [(_, _, infos), _] = worked_example.play(feedback="llm", feedback_options=options)
    assert infos["helper"]["feedback"] == advice["helper"] and advice["helper"] in env.render()
    assert len(server.requests) == 1  # the final turn is not reviewed
    assert "return n % 2 == 1" in server.requests[0]["messages"][-1]["content"]
    assert "reward" not in server.requests[0]["messages"][-1]["content"].lower()  # v2: the hidden pass share stays out


def test_docs_page_shows_the_real_transcript():
    documented = worked_example.documented_transcript()
    assert documented is not None, "docs/multi_turn.md lost its transcript block"
    assert documented == worked_example.transcript(), (
        "docs/multi_turn.md is out of date with env.render(); regenerate it with "
        "`python -m tests.multiturn.worked_example --write`"
    )
