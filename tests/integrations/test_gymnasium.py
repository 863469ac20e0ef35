"""Every registered id is a Gymnasium id, ``llm_coop_envs/<id>``: one agent's view (``SingleAgentEnv``)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

import llm_coop_envs
from llm_coop_envs.registration import gymnasium_id
from llm_coop_envs.wrappers import SingleAgentEnv
from tests.integrations.test_pettingzoo_api import CURRENT_IDS


def test_every_registered_id_is_a_gymnasium_id():
    for env_id in llm_coop_envs.registered_ids():
        spec = gymnasium.spec(gymnasium_id(env_id))
        assert spec.kwargs["env_id"] == env_id and spec.namespace == "llm_coop_envs"


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_gymnasium_make_plays_an_episode_and_passes_gymnasiums_checker(env_id):
    env = gymnasium.make(f"llm_coop_envs/{env_id}", render_mode="ansi")
    assert isinstance(env.unwrapped, SingleAgentEnv) and env.unwrapped.env.spec.id == env_id
    observation, info = env.reset(seed=0)
    assert isinstance(observation, str) and info["task_id"]
    terminated = truncated = False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step("def f():\n    return 1\n")
        assert isinstance(reward, float)
    assert env.render().startswith("=== Task")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "no render_fps": a text env has no frame rate
        gymnasium_check_env(env.unwrapped)


def test_agent_partners_and_env_arguments_go_through():
    env = gymnasium.make("llm_coop_envs/coop_basics-v1", agent="helper", partners={"main": lambda obs: "pass"},
                         num_turns=2, split="test")
    single = env.unwrapped
    assert single.agent == "helper" and single.env.num_turns == 2 and single.env.spec.kwargs["split"] == "test"
    assert single.partners["main"]("x") == "pass"
    assert gymnasium.make("llm_coop_envs/tldr-v4").unwrapped.agent == "tldr"  # no main: the first role
    assert gymnasium.make("llm_coop_envs/coop_basics-v1").unwrapped.agent == "main"


def test_mistakes_are_named():
    with pytest.raises(ValueError, match="not an agent of this env"):
        gymnasium.make("llm_coop_envs/coop_basics-v1", agent="mian")
    with pytest.raises(TypeError, match="did you mean 'num_turns'"):
        gymnasium.make("llm_coop_envs/coop_basics-v1", num_turn=2)


def test_a_users_registered_env_is_a_gymnasium_id_too():
    from tests.toy_task import SecretWordTask

    def toy(**kwargs):
        from llm_coop_envs.core import CoopEnv

        return CoopEnv(SecretWordTask(), **kwargs)

    if "toy_gym-v0" not in llm_coop_envs.registered_ids():
        llm_coop_envs.register("toy_gym-v0", toy)
    env = gymnasium.make("llm_coop_envs/toy_gym-v0", agent="second", partners={"first": lambda obs: "apple"})
    env.reset(seed=0, options={"index": 0})
    _, reward, terminated, _, _ = env.step("apple")
    assert reward == 2.0 and terminated


def test_the_module_prefix_imports_the_package():
    code = ("import gymnasium; env = gymnasium.make('llm_coop_envs:llm_coop_envs/coop_basics-v1'); "
            "print(type(env.unwrapped).__name__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "SingleAgentEnv"
