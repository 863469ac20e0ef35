import copy
import warnings

import pytest

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.testing import check_env
from tests.toy_task import SecretWordTask


@pytest.mark.parametrize("num_turns", [1, 3])
@pytest.mark.parametrize("protocol", ["parallel", "sequential"])
def test_toy_env_passes_check_env(num_turns, protocol):
    check_env(CoopEnv(SecretWordTask(), num_turns=num_turns, protocol=protocol))



class DriftingTask(SecretWordTask):
    """Its prompts differ each time they are asked for: no episode is reproducible."""

    asked = 0

    def prompt(self, index, agent):
        self.asked += 1
        return f"{super().prompt(index, agent)} ({self.asked})"


@pytest.mark.parametrize("how", ["in range", "private check gone", "pettingzoo outside the declared range"])
def test_check_env_around_pettingzoos_private_dtype_check(monkeypatch, how):
    """check_env replaces PettingZoo's private _test_observation_space_compatibility for its AEC test; without
    it (or outside PettingZoo's declared range) the AEC test is skipped with a warning and the rest still checks."""
    import importlib

    import pettingzoo.test

    from llm_coop_envs import testing

    api_test_module = importlib.import_module("pettingzoo.test.api_test")
    if how == "private check gone":
        monkeypatch.delattr(api_test_module, "_test_observation_space_compatibility")
    elif how != "in range":
        monkeypatch.setattr(testing, "in_tested_range", lambda dist: dist != "pettingzoo")
    ran = []
    parallel, aec = pettingzoo.test.parallel_api_test, api_test_module.api_test
    monkeypatch.setattr(pettingzoo.test, "parallel_api_test", lambda env, **kw: ran.append("parallel") or parallel(env, **kw))
    monkeypatch.setattr(api_test_module, "api_test", lambda env, **kw: ran.append("aec") or aec(env, **kw))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(CoopEnv(SecretWordTask(), num_turns=2))
    skipped = [w for w in caught if "skipped PettingZoo's AEC api_test" in str(w.message)]
    assert ran == (["parallel", "aec"] if how == "in range" else ["parallel"]) and len(skipped) == (how != "in range")
    with pytest.raises(AssertionError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(CoopEnv(DriftingTask(), num_turns=2))


def test_joint_reward_and_feedback_across_turns():
    env = CoopEnv(SecretWordTask(), num_turns=3)
    obs, infos = env.reset(seed=0, options={"task_id": "toy/1"})
    assert infos["first"]["task_id"] == "toy/1" and infos["first"]["turn"] == 1
    obs, rewards, terms, truncs, infos = env.step({"first": "brick", "second": "nope"})
    assert rewards == {"first": 1.0, "second": 1.0}
    assert not any(terms.values()) and infos["second"]["feedback"] == "missing the word 'brick'"
    assert "missing the word 'brick'" in obs["second"] and "Your previous reply:\nnope" in obs["second"]
    obs, rewards, terms, truncs, infos = env.step({"first": "brick", "second": "brick"})
    assert rewards["first"] == 2.0 and all(terms.values()) and env.agents == []
    assert infos["first"]["turn"] == 2 and infos["first"]["solved"]


def test_sequential_protocol_shows_earlier_reply_and_pays_at_turn_end():
    env = CoopEnv(SecretWordTask(), protocol="sequential")
    obs, infos = env.reset(seed=0, options={"index": 2})
    assert infos["first"]["active"] and not infos["second"]["active"]
    obs, rewards, terms, _, infos = env.step({"first": "my cloud"})
    assert rewards == {"first": 0.0, "second": 0.0} and not any(terms.values())
    assert "The first agent wrote:\nmy cloud" in obs["second"] and infos["second"]["active"]
    obs, rewards, terms, _, _ = env.step({"second": "cloud"})
    assert rewards["second"] == 2.0 and all(terms.values())


def test_share_replies_shows_partner_reply():
    env = CoopEnv(SecretWordTask(), num_turns=2, share_replies=True)
    env.reset(seed=0, options={"index": 0})
    obs, *_ = env.step({"first": "A-reply", "second": "B-reply"})
    assert "The second agent's previous reply:\nB-reply" in obs["first"]


def test_deepcopy_shares_task_but_not_episode():
    env = CoopEnv(SecretWordTask(), num_turns=2)
    env.reset(seed=0)
    branch = copy.deepcopy(env)
    assert branch.task is env.task
    branch.step({"first": "x", "second": "y"})
    assert env.transcript().count("Turn") == 0 and branch.transcript().count("Turn 1") == 1


def test_unknown_task_id_names_examples():
    env = CoopEnv(SecretWordTask())
    with pytest.raises(ValueError, match="toy/0"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(IndexError):
        env.reset(options={"task_id": 99})


def test_misspelt_reset_option_names_the_valid_ones():
    env = CoopEnv(SecretWordTask())
    with pytest.raises(ValueError, match=r"\['taskid'\] \(did you mean 'taskid' -> 'task_id'\?\).*'task_id', 'index'"):
        env.reset(options={"taskid": "toy/1"})
    with pytest.raises(ValueError, match="'idx' -> 'index'"):
        env.reset(options={"idx": 1})
    with pytest.warns(UserWarning, match=r"ignores the option\(s\) \['colour'\]"):
        env.reset(options={"colour": "red"})


@pytest.mark.parametrize("protocol", ["parallel", "sequential"])
def test_max_cycles_truncates_like_pettingzoo(protocol):
    env = CoopEnv(SecretWordTask(), num_turns=5, protocol=protocol, max_cycles=3)
    env.reset(seed=0)
    steps = []
    while env.agents:
        _, _, terminations, truncations, _ = env.step({a: "wrong" for a in env.agents})
        steps.append((any(terminations.values()), all(truncations.values())))
    assert steps == [(False, False), (False, False), (False, True)]
    check_env(CoopEnv(SecretWordTask(), num_turns=3, protocol=protocol, max_cycles=2))


def test_episode_ending_before_max_cycles_is_not_truncated():
    env = CoopEnv(SecretWordTask(), num_turns=1, max_cycles=5)
    env.reset(options={"index": 0})
    _, _, terminations, truncations, _ = env.step({"first": "apple", "second": "apple"})
    assert all(terminations.values()) and not any(truncations.values()) and env.agents == []


@pytest.mark.parametrize(
    "kwargs",
    [{"num_turns": 0}, {"protocol": "round-robin"}, {"feedback": "oracle"}, {"max_cycles": 0}, {"max_cycles": "3"}],
)
def test_bad_options_are_rejected(kwargs):
    with pytest.raises(ValueError):
        CoopEnv(SecretWordTask(), **kwargs)
