"""A run says what code it ran from the moment it starts: ``starts.jsonl`` gets a line (the step it
starts from and the run's record, ``code`` included) before the first step or evaluation, so a run that
crashes before its first evaluation or checkpoint still names its code; a resume adds a line of its own."""

from __future__ import annotations

import json

import pytest

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.code_version import source_hash
from trainers.run_folder import START_FILE
from trainers.trainer import Trainer


class CrashingTask(LetterTask):
    """A task whose reward raises on the first step, as a broken user reward would."""

    def evaluate(self, index, replies):
        raise RuntimeError("the reward crashed")


def starts(run) -> list[dict]:
    return [json.loads(line) for line in (run / START_FILE).read_text(encoding="utf-8").splitlines()]


def test_a_run_that_crashes_before_its_first_evaluation_still_names_its_code(tmp_path, tokenizer):
    trainer = Trainer(tiny_config(tmp_path, steps=2, eval_problems=0), env=CoopEnv(CrashingTask()),
                      models=(build_model(tokenizer), tokenizer))
    with pytest.raises(RuntimeError, match="the reward crashed"):
        trainer.train()
    trainer.close()
    run = tmp_path / "run"
    assert not (run / "checkpoints").exists() and not (run / "eval").exists() and not (run / "final").exists()
    (start,) = starts(run)
    assert start["step"] == 0 and start["provenance"]["env"]["id"] == "letters-v0"
    assert start["provenance"]["code"]["source_sha256"] == source_hash()
    assert start["provenance"]["algorithm"]["import_path"].endswith(":MAGRPO")


def test_each_start_of_a_resumed_run_adds_its_line(tmp_path, tokenizer):
    first = Trainer(tiny_config(tmp_path, steps=1), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    first.train()
    first.close()
    again = Trainer(tiny_config(tmp_path, steps=2, resume=True), env=CoopEnv(LetterTask()),
                    models=(build_model(tokenizer), tokenizer))
    again.close()
    assert [start["step"] for start in starts(tmp_path / "run")] == [0, 1]
