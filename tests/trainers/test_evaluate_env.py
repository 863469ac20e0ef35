"""The held-out env: an env that takes no split is refused by its signature, and a real error is not hidden."""

import pytest

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from tests.toy_task import SecretWordTask
from trainers.config import TrainConfig
from trainers.evaluate import make_eval_env


def no_split_env(num_turns: int = 1):
    return CoopEnv(SecretWordTask(), num_turns=num_turns)


def split_env(split: str = "train", num_turns: int = 1):
    if num_turns < 1:
        raise TypeError("num_turns must be a positive int")  # a real error inside an env that takes a split
    env = CoopEnv(SecretWordTask(), num_turns=num_turns)
    env.split = split
    return env


def ensure(env_id, entry_point):
    if env_id not in llm_coop_envs.registered_ids():
        llm_coop_envs.register(env_id, entry_point)
    return env_id


def test_the_signature_says_whether_an_env_takes_a_split():
    assert llm_coop_envs.spec(ensure("toy_split-v0", split_env)).accepts("split")
    assert not llm_coop_envs.spec(ensure("toy_nosplit-v0", no_split_env)).accepts("split")
    assert llm_coop_envs.spec("coop_humaneval-v0").accepts("split")


def test_the_eval_env_is_the_test_split():
    env = make_eval_env(TrainConfig(env=ensure("toy_split-v0", split_env), eval_problems=2))
    assert env.split == "test"


def test_an_env_without_split_is_a_clear_error():
    with pytest.raises(ValueError, match="takes no split"):
        make_eval_env(TrainConfig(env=ensure("toy_nosplit-v0", no_split_env), eval_problems=2))


def test_a_type_error_inside_the_env_is_not_taken_for_a_missing_split():
    cfg = TrainConfig(env=ensure("toy_split-v0", split_env), env_kwargs={"num_turns": 0}, eval_problems=2)
    with pytest.raises(TypeError, match="positive int"):
        make_eval_env(cfg)
