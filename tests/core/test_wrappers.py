import copy
import json

import pytest

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.wrappers import SingleAgentEnv, TranscriptRecorder
from tests.toy_task import SecretWordTask


@pytest.mark.parametrize("protocol", ["parallel", "sequential"])
def test_single_agent_view_plays_partners(protocol):
    env = SingleAgentEnv(CoopEnv(SecretWordTask(), protocol=protocol), "second", {"first": lambda obs: "apple"})
    obs, info = env.reset(seed=0, options={"index": 0})
    assert "second" in obs and info["task_id"] == "toy/0"
    obs, reward, terminated, truncated, info = env.step("apple")
    assert reward == 2.0 and terminated and not truncated


def test_single_agent_view_rejects_bad_input():
    with pytest.raises(ValueError, match="not an agent"):
        SingleAgentEnv(CoopEnv(SecretWordTask()), "third")
    env = SingleAgentEnv(CoopEnv(SecretWordTask()), "first")
    env.reset(seed=0)
    with pytest.raises(TypeError):
        env.step(b"bytes")


def test_recorder_writes_one_line_per_episode(tmp_path):
    path = tmp_path / "episodes.jsonl"
    env = TranscriptRecorder(CoopEnv(SecretWordTask(), num_turns=2, stop_when_solved=False), path)
    for seed in range(2):
        env.reset(seed=seed)
        while env.agents:
            env.step({"first": "apple \ud800", "second": "x"})
    branch = copy.deepcopy(env)
    assert branch.env is not env.env
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 2 and len(records[0]["steps"]) == 2
    assert records[0]["steps"][0]["replies"]["first"].startswith("apple")
