"""Render modes as Gymnasium and PettingZoo define them: ``"ansi"`` returns text, ``"human"`` prints
(during reset and step, and on ``render()``) and returns ``None``; no mode warns."""

from __future__ import annotations

import pytest
from pettingzoo.test import render_test

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.wrappers import SingleAgentEnv
from tests.toy_task import SecretWordTask


def play(env: CoopEnv) -> None:
    env.reset(seed=0, options={"index": 1})
    while env.agents:
        env.step({agent: "brick" if agent == "first" else "no" for agent in env.agents})


def test_metadata_names_both_modes():
    assert CoopEnv.metadata["render_modes"] == ["human", "ansi"]
    assert SingleAgentEnv.metadata["render_modes"] == ["human", "ansi"]


def test_ansi_returns_the_transcript_and_prints_nothing(capsys):
    env = CoopEnv(SecretWordTask(), num_turns=2, render_mode="ansi")
    play(env)
    text = env.render()
    assert isinstance(text, str) and text == env.transcript()
    assert text.startswith("=== Task toy/1 ===") and "##### Turn 2" in text
    assert capsys.readouterr().out == ""


def test_human_prints_as_the_episode_goes_and_returns_none(capsys):
    env = CoopEnv(SecretWordTask(), num_turns=2, render_mode="human")
    env.reset(seed=0, options={"index": 1})
    assert capsys.readouterr().out == "=== Task toy/1 ===\n"
    env.step({"first": "brick", "second": "no"})
    turn_one = capsys.readouterr().out
    assert "##### Turn 1" in turn_one and "Turn 2" not in turn_one and "Feedback for second" in turn_one
    env.step({"first": "brick", "second": "no"})
    assert "##### Turn 2" in capsys.readouterr().out
    assert env.render() is None
    assert capsys.readouterr().out == env.transcript() + "\n"


def test_human_prints_each_turn_once_in_the_sequential_protocol(capsys):
    env = CoopEnv(SecretWordTask(), num_turns=1, protocol="sequential", render_mode="human")
    env.reset(seed=0)
    env.step({"first": "a"})
    assert "##### Turn" not in capsys.readouterr().out  # the turn is not over yet
    env.step({"second": "b"})
    assert capsys.readouterr().out.count("##### Turn 1") == 1


def test_human_shows_text_the_terminal_cannot_encode(capsys):
    env = CoopEnv(SecretWordTask(), render_mode="human")
    env.reset(seed=0)
    env.step({"first": "lone \ud800 surrogate", "second": ""})
    assert "lone \\ud800 surrogate" in capsys.readouterr().out


def test_no_mode_warns_and_still_returns_the_transcript():
    env = CoopEnv(SecretWordTask())
    play(env)
    with pytest.warns(UserWarning, match="without a render_mode"):
        text = env.render()
    assert text == env.transcript() and "##### Turn 1" in text


def test_transcript_needs_no_mode_and_no_episode():
    env = CoopEnv(SecretWordTask())
    assert "reset()" in env.transcript()


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="render_mode must be None, 'human' or 'ansi'"):
        CoopEnv(SecretWordTask(), render_mode="rgb_array")


@pytest.mark.parametrize("protocol", ["parallel", "sequential"])
def test_pettingzoo_render_test(protocol):
    from pettingzoo.utils.conversions import parallel_to_aec

    render_test(lambda render_mode=None: parallel_to_aec(
        CoopEnv(SecretWordTask(), num_turns=3, protocol=protocol, render_mode=render_mode)))


def test_single_agent_view_renders_in_the_wrapped_envs_mode(capsys):
    ansi = SingleAgentEnv(CoopEnv(SecretWordTask(), render_mode="ansi"), "first")
    assert ansi.render_mode == "ansi"
    ansi.reset(seed=0, options={"index": 0})
    ansi.step("apple")
    assert "apple" in ansi.render()
    human = SingleAgentEnv(CoopEnv(SecretWordTask(), render_mode="human"), "first")
    assert human.render_mode == "human"
    human.reset(seed=0, options={"index": 0})
    human.step("apple")
    assert "##### Turn 1" in capsys.readouterr().out
    assert human.render() is None
