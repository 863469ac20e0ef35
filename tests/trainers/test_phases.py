"""Training phases: the env settings a run trains on change at the configured steps, resumably."""

from __future__ import annotations

import pytest

from tests.trainers.conftest import build_model, tiny_config
from trainers.config import ConfigError, load_config
from trainers.phases import Phase, env_kwargs_at, parse_phases, phase_index
from trainers.trainer import Trainer

SCHEDULE = [{"from_step": 1, "env_kwargs": {"level": 1}}, {"from_step": 3, "env_kwargs": {"level": [1, 2]}}]


def test_each_step_trains_on_the_phase_in_force():
    phases = parse_phases(SCHEDULE)
    assert [phase_index(phases, step) for step in range(5)] == [None, 0, 0, 1, 1]
    base = {"split": "train", "level": 3}
    assert env_kwargs_at(base, phases, 0) == base
    assert env_kwargs_at(base, phases, 2) == {"split": "train", "level": 1}
    assert env_kwargs_at(base, phases, 9) == {"split": "train", "level": [1, 2]}


@pytest.mark.parametrize("phases,message", [
    ([{"from_step": 2}, {"from_step": 1}], "increasing"),
    ([{"from_step": 1}, {"from_step": 1}], "distinct"),
    ([{"from_step": -1}], "from_step must be an int >= 0"),
    ([{"start": 1}], "from_step"),
    ([{"from_step": 1, "env_kwargs": 3}], "table of env arguments"),
])
def test_bad_phases_are_refused_in_one_line(phases, message):
    with pytest.raises(ConfigError, match=message):
        load_config(env="coop_procedural-v0", phases=phases)


def test_the_trainer_makes_each_phases_env_and_a_resumed_step_gets_the_same(tmp_path, tokenizer):
    config = tiny_config(tmp_path, env="coop_procedural-v0", env_kwargs={"level": 2}, phases=SCHEDULE,
                         eval_problems=0, steps=0)
    trainer = Trainer(config, models=(build_model(tokenizer), tokenizer))
    levels = [trainer.env_at(step).spec.kwargs.get("level") for step in range(5)]
    assert levels == [2, 1, 1, [1, 2], [1, 2]]
    assert trainer.env_at(4) is trainer.env_at(3)  # one env per phase, made once
    again = Trainer(tiny_config(tmp_path, env="coop_procedural-v0", env_kwargs={"level": 2}, phases=SCHEDULE,
                                eval_problems=0, steps=0, run_name="again"), models=(build_model(tokenizer), tokenizer))
    assert again.env_at(3).spec.kwargs == trainer.env_at(3).spec.kwargs


def test_a_phase_cannot_change_the_team(tmp_path, tokenizer):
    config = tiny_config(tmp_path, env="coop_procedural-v0", phases=[{"from_step": 1, "env_kwargs": {"team": "single"}}],
                         eval_problems=0, steps=0)
    with pytest.raises(ValueError, match="not the team"):
        Trainer(config, models=(build_model(tokenizer), tokenizer))


def test_phase_is_a_plain_record():
    assert parse_phases([{"from_step": 0, "env_kwargs": {"feedback": "llm"}}]) == (Phase(0, {"feedback": "llm"}),)
