"""``llm-coop eval --problems N`` builds only the first N problems of a split: a generated training split
(coop_procedural's, a million problems built on first use) would otherwise be built whole."""

from __future__ import annotations

import llm_coop_envs
from benchmarks.evaluate import EvalConfig, _pick_task_ids
from llm_coop_envs.coding.procedural.generate import TrainRows


class _Counting(TrainRows):
    """The suite's training rows, counting the problems built."""

    built = 0

    def __getitem__(self, index):
        _Counting.built += 1
        return super().__getitem__(index)


def test_the_first_problems_of_a_generated_split_are_all_that_is_built():
    env = llm_coop_envs.make("coop_procedural-v1", split="train", level=1)
    rows = _Counting(levels=(1,), checks=True)
    env.task.problems._rows = rows  # the same rows, counted
    config = EvalConfig(env="coop_procedural-v1", problems=3)
    ids = _pick_task_ids(env, config)
    assert ids == [rows[i]["task_id"] for i in range(3)] and _Counting.built == 6
