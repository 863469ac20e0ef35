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


def test_a_whole_evaluation_of_training_problems_builds_only_those(monkeypatch):
    """The whole evaluation, episodes and their annotation included (annotation once listed the split)."""
    from benchmarks.baselines import ScriptedGenerator, get_method
    from benchmarks.evaluate import Entry, evaluate

    rows = _Counting(levels=(1,), checks=True)
    made = llm_coop_envs.make

    def counted_make(env_id, **kwargs):
        env = made(env_id, **kwargs)
        env.unwrapped.task.problems._rows = rows
        return env

    monkeypatch.setattr(llm_coop_envs, "make", counted_make)
    _Counting.built = 0
    team = dict.fromkeys(("helper", "main"), ScriptedGenerator({"helper": "def aux(x):\n    return x", "main": "pass"}))
    config = EvalConfig(env="coop_procedural-v1", env_kwargs={"split": "train", "level": 1}, problems=2, n=1, ks=(1,))
    results = evaluate(config, [Entry("env", get_method("env"), team)], progress=False)
    assert len(results["episodes"]) == 2 and _Counting.built < 50
