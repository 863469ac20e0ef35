"""Every coding id: conformance, splits, data files, protocols."""

import json

import pytest

import llm_coop_envs
from llm_coop_envs.testing import check_env

CODING_IDS = ("coop_humaneval-v0", "humaneval-v0", "mbpp-v0")


@pytest.mark.parametrize("env_id", CODING_IDS)
def test_check_env(env_id):
    check_env(llm_coop_envs.make(env_id))


@pytest.mark.parametrize(
    ("env_id", "sizes"),
    [
        ("coop_humaneval-v0", {"train": 50, "test": 16, "all": 82}),
        ("humaneval-v0", {"train": 100, "test": 32, "all": 164}),
        ("mbpp-v0", {"train": 50, "test": 15, "all": 257}),
    ],
)
def test_split_sizes(env_id, sizes):
    for split, size in sizes.items():
        assert len(llm_coop_envs.make(env_id, split=split).task) == size
    assert len(llm_coop_envs.make(env_id).task) == sizes["train"], "the default split is train"
