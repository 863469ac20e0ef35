"""A quick held-out check (the first N problems: ``llm-coop eval --problems N``, the trainer's
``eval_problems``) reads every tier of coop_basics-v1, not tier 1 alone."""

import json

import llm_coop_envs
from benchmarks.cli import eval_command


def tier(task_id: str) -> str:
    return task_id.split("/")[1]


def test_the_held_out_split_takes_the_tiers_in_turns():
    test = llm_coop_envs.make("coop_basics-v1", split="test").task
    task_ids = [test.task_id(i) for i in range(len(test))]
    assert [tier(t) for t in task_ids[:6]] == ["t1", "t2", "t3"] * 2
    every_tier = llm_coop_envs.make("coop_basics-v1", split="all").task
    held_out = [every_tier.task_id(i) for i in range(len(every_tier)) if every_tier.problems[i].row["split"] == "test"]
    assert sorted(task_ids) == sorted(held_out)  # the same problems, in another order


def test_eval_with_three_problems_reads_one_of_each_tier(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"helper": "def aux(x):\n    return x", "main": "pass"}), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["coop_basics-v1", "--scripted", str(script), "--methods", "env", "-n", "1", "--problems", "3",
            "--out", str(out), "-q"]
    assert eval_command(argv) == 0
    task_ids = json.loads((out / "results.json").read_text(encoding="utf-8"))["config"]["task_ids"]
    assert [tier(t) for t in task_ids] == ["t1", "t2", "t3"]
