"""The end of ``llm-coop train``: the template-twin line, the training-curve picture drawn from
``metrics.jsonl``, its path and the run's duration printed after the before/after table."""

from __future__ import annotations

import functools

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers import cli
from trainers.curve import PICTURE_FILE, plot_run
from trainers.metrics_log import MetricsLogger


def test_the_picture_is_drawn_from_the_logged_steps_and_evaluations(tmp_path):
    logger = MetricsLogger(tmp_path, tensorboard=False)
    logger.log(0, {"train/step": 0, "eval/pass_rate": 0.2, "eval/tests_passed": 0.25, "eval/reward": 1.0})
    for step in (1, 2):
        logger.log(step, {"train/step": step, "reward/mean": 1.0 + step / 10, "reward/tests": step / 4})
    logger.log(2, {"train/step": 2, "eval/pass_rate": 0.5, "eval/tests_passed": 0.5, "eval/reward": 2.0})
    logger.close()
    path = plot_run(tmp_path)
    assert path == tmp_path / PICTURE_FILE
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_picture_without_logged_steps(tmp_path):
    assert plot_run(tmp_path) is None  # no metrics.jsonl
    MetricsLogger(tmp_path, tensorboard=False).close()
    assert plot_run(tmp_path) is None  # an empty one


def test_train_prints_the_picture_and_how_long_it_took(tmp_path, tokenizer, monkeypatch, capsys):
    import trainers.trainer

    with_models = functools.partial(trainers.trainer.Trainer, models=(build_model(tokenizer), tokenizer))
    monkeypatch.setattr(trainers.trainer, "Trainer", with_models)
    cfg = tiny_config(tmp_path, steps=1, eval_problems=1)
    cli.run_training(cfg, env=CoopEnv(LetterTask()), eval_env=CoopEnv(LetterTask()))
    lines = capsys.readouterr().out.splitlines()
    assert f"Training curve: {tmp_path / 'run' / PICTURE_FILE}" in lines
    assert (tmp_path / "run" / PICTURE_FILE).is_file()
    (twins,) = [line for line in lines if line.startswith("Held-out problems with a number-masked template twin")]
    assert twins.endswith("training draws: 1/1 (100 %).")  # LetterTask has one template
    assert lines[-1].startswith("Took ") and lines[-1].endswith("(model loading, training and evaluations).")
