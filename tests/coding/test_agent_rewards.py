"""``reward_mode="per_agent"`` on the coding tasks: the joint reward is unchanged; with references each
agent is judged paired with its partner's reference, without them it gets structure credit."""

from __future__ import annotations

import pytest

import llm_coop_envs
from llm_coop_envs.coding.coop_basics import suite_rows
from llm_coop_envs.coding.task import CodingTask
from llm_coop_envs.testing import check_env
from tests.coding.problems import HELPER_SUM, MAIN_ALONE, MAIN_USES, rows

ROW = next(row for row in suite_rows() if row["task_id"] == "coop_basics/t1/bonus_points")
BAD_HELPER = "def aux(score):\n    return score\n"
BAD_MAIN = "def add_bonus_points(scores):\n    return scores\n"
HOSTILE = ["", "I cannot help with that.", "def aux(score):\n    raise SystemExit(0)\n",
           "import os\ndef add_bonus_points(scores):\n    os._exit(0)\n"]
PAIRS = [(ROW["reference_helper"], BAD_MAIN), (BAD_HELPER, ROW["reference_main"]), (BAD_HELPER, BAD_MAIN),
         *[(hostile, ROW["reference_main"]) for hostile in HOSTILE], *[(ROW["reference_helper"], h) for h in HOSTILE],
         (HOSTILE[0], HOSTILE[3])]


def _task(mode: str, problems=None) -> CodingTask:
    return CodingTask(problems or [ROW], reward_mode=mode)


def test_reference_pair_scores_each_agent_its_maximum():
    evaluation = _task("per_agent").evaluate(0, {"helper": ROW["reference_helper"], "main": ROW["reference_main"]})
    assert evaluation.reward.total == pytest.approx(4.0) and evaluation.solved
    assert evaluation.agent_rewards["helper"].total == pytest.approx(3.4)  # 4.0 without main_defined
    assert evaluation.agent_rewards["main"].total == pytest.approx(3.6)  # 4.0 without helper_defined


@pytest.mark.parametrize("helper,main", PAIRS)
def test_joint_reward_is_unchanged_and_each_agent_pays_only_for_its_own_code(helper, main):
    replies = {"helper": helper, "main": main}
    joint, own = _task("joint").evaluate(0, replies), _task("per_agent").evaluate(0, replies)
    assert joint.agent_rewards is None
    assert own.reward == joint.reward and own.solved == joint.solved and own.feedback == joint.feedback
    with_reference_main = _task("per_agent").evaluate(0, {"helper": helper, "main": ROW["reference_main"]})
    with_reference_helper = _task("per_agent").evaluate(0, {"helper": ROW["reference_helper"], "main": main})
    # the helper's reward does not depend on main's reply, nor main's on the helper's
    assert own.agent_rewards["helper"] == with_reference_main.agent_rewards["helper"]
    assert own.agent_rewards["main"] == with_reference_helper.agent_rewards["main"]
    if helper != ROW["reference_helper"]:
        assert own.agent_rewards["helper"].total < 3.4 - 0.5
    if main != ROW["reference_main"]:
        assert own.agent_rewards["main"].total < 3.6 - 0.5


@pytest.mark.slow
def test_a_hanging_helper_costs_only_the_helper():
    evaluation = _task("per_agent").evaluate(0, {"helper": "def aux(score):\n    while True:\n        pass\n",
                                                 "main": ROW["reference_main"]})
    assert evaluation.agent_rewards["main"].total == pytest.approx(3.6)
    assert evaluation.agent_rewards["helper"].total < 3.4 - 1.0  # 1 of 6 tests (the empty list) passes


def test_without_references_each_agent_gets_structure_credit():
    task = CodingTask(rows(1), reward_mode="per_agent")
    for replies in ({"helper": HELPER_SUM, "main": MAIN_USES}, {"helper": HELPER_SUM, "main": "junk"},
                    {"helper": "junk", "main": MAIN_ALONE}):
        evaluation = task.evaluate(0, replies)
        components = evaluation.reward.components
        assert evaluation.agent_rewards["helper"].total == pytest.approx(evaluation.reward.total - components["main_defined"])
        assert evaluation.agent_rewards["main"].total == pytest.approx(evaluation.reward.total - components["helper_defined"])


def test_env_reports_own_rewards_and_the_joint_one(data_dir):
    env = llm_coop_envs.make("coop_basics-v0", reward_mode="per_agent")
    env.reset(options={"task_id": ROW["task_id"]})
    _, rewards, _, _, infos = env.step({"helper": BAD_HELPER, "main": ROW["reference_main"]})
    assert rewards["main"] == pytest.approx(3.6) and rewards["helper"] < 3.0
    assert infos["helper"]["joint_reward"] == infos["main"]["joint_reward"] < 4.0
    assert "main_defined" not in infos["helper"]["agent_reward_components"]
    solo = llm_coop_envs.make("coop_basics-v0", reward_mode="per_agent", team="single")
    solo.reset(options={"task_id": ROW["task_id"]})
    _, rewards, _, _, infos = solo.step({"main": ROW["reference_helper"] + "\n" + ROW["reference_main"]})
    assert rewards["main"] == infos["main"]["joint_reward"]
    with pytest.raises(ValueError, match="reward_mode"):
        llm_coop_envs.make("coop_basics-v0", reward_mode="each")


@pytest.mark.parametrize("protocol", ["parallel", "sequential"])
def test_per_agent_env_passes_check_env(protocol):
    check_env(llm_coop_envs.make("coop_basics-v0", reward_mode="per_agent", protocol=protocol, num_turns=2), quick=True)
