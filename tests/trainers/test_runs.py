"""Runs: exact resume after SIGKILL, the run-folder guard, non-finite values, what reaches the loss,
and the held-out evaluation contract (metrics rows, per-problem records, eval.json)."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers import register_algorithm
from trainers.algorithms.base import policy_gradient_loss
from trainers.config import load_config
from trainers.metrics_log import MetricsLogger, read_metrics
from trainers.run_folder import RunExistsError
from trainers.trainer import Trainer

WORKER = Path(__file__).with_name("resume_worker.py")


def _trainer(tmp_path, tokenizer, **fields):
    return Trainer(tiny_config(tmp_path, **fields), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))


def _weights(trainer):
    return {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}


# ---------------------------------------------------------------------------- exact resume
def _worker(tmp_path, name, *extra):
    return subprocess.run([sys.executable, str(WORKER), str(tmp_path), "--run-name", name, *extra],
                          capture_output=True, text=True, timeout=600)


def _without_timing(rows):
    return [{k: v for k, v in row.items() if not k.startswith("perf/")} for row in rows]


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory):
    """Four steps without interruption (the reference every killed-and-resumed run must equal)."""
    folder = tmp_path_factory.mktemp("straight")
    straight = _worker(folder, "straight", "--weights", str(folder / "straight.pt"))
    assert straight.returncode == 0, straight.stderr
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [6, 1])  # mid-update of step 3 (helper already updated, main not); step 1
def test_sigkill_at_any_point_then_resume_equals_a_straight_run(tmp_path, straight_run, kill_at):
    killed = _worker(tmp_path, "killed", "--kill-at", str(kill_at))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = _worker(tmp_path, "killed", "--resume", "--weights", str(tmp_path / "resumed.pt"))
    assert resumed.returncode == 0, resumed.stderr
    want, got = torch.load(straight_run / "straight.pt"), torch.load(tmp_path / "resumed.pt")
    for key, tensors in want.items():
        for name, value in tensors.items():
            torch.testing.assert_close(got[key][name], value, rtol=0, atol=0)
    assert _without_timing(read_metrics(tmp_path / "killed")) == _without_timing(read_metrics(straight_run / "straight"))
    assert (tmp_path / "killed" / "samples.jsonl").read_text() == (straight_run / "straight" / "samples.jsonl").read_text()


# ---------------------------------------------------------------------------- run folders
def test_reusing_a_run_name_refuses_unless_resume_or_overwrite(tmp_path, tokenizer):
    _trainer(tmp_path, tokenizer, steps=1).train()
    with pytest.raises(RunExistsError, match=r"resume=true.*--resume.*overwrite=true.*fresh run_name"):
        _trainer(tmp_path, tokenizer, steps=1)
    assert len(read_metrics(tmp_path / "run")) == 1  # nothing was touched
    replaced = _trainer(tmp_path, tokenizer, steps=2, overwrite=True)
    replaced.train()
    assert [r["step"] for r in read_metrics(tmp_path / "run")] == [1, 2]
    resumed = _trainer(tmp_path, tokenizer, steps=3, resume=True)
    assert resumed.step == 2
    resumed.train()
    assert [r["step"] for r in read_metrics(tmp_path / "run")] == [1, 2, 3]


def test_without_a_run_name_every_run_gets_a_fresh_folder(tmp_path, tokenizer):
    first = _trainer(tmp_path, tokenizer, steps=1, run_name=None)
    first.train()
    second = _trainer(tmp_path, tokenizer, steps=1, run_name=None)
    second.train()
    assert first.run_dir != second.run_dir and first.run_dir.name.startswith("magrpo-")
    assert len(read_metrics(first.run_dir)) == len(read_metrics(second.run_dir)) == 1


def test_the_demo_preset_runs_twice(tmp_path, tokenizer):
    tiny = ["steps=1", "eval_problems=0", "group_size=2", "sampling.max_new_tokens=4", "lora_r=2",
            "progress_bar=false", "tensorboard=false", "model=unused"]
    for _ in range(2):
        cfg = load_config(preset="cpu-demo", overrides=tiny, run_dir=str(tmp_path))
        assert cfg.overwrite and cfg.run_name == "cpu-demo"
        Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer)).train()
        assert len(read_metrics(tmp_path / "cpu-demo")) == 1


# ---------------------------------------------------------------------------- non-finite values
def test_non_finite_metrics_are_logged_not_dropped(tmp_path):
    logger = MetricsLogger(tmp_path, tensorboard=False)
    logger.log(1, {"loss": float("nan"), "up": float("inf"), "down": -math.inf, "ok": 0.5, "text": "skip"})
    logger.close()
    assert read_metrics(tmp_path) == [{"step": 1, "loss": "nan", "up": "inf", "down": "-inf", "ok": 0.5}]


def test_a_non_finite_loss_stops_training_before_the_update(tmp_path, tokenizer):
    @register_algorithm("nan_loss_test")
    class NanLoss:
        def advantages(self, group):
            return np.ones(len(group.returns))

        def loss(self, batch):
            return policy_gradient_loss(batch) * float("nan")

    trainer = _trainer(tmp_path, tokenizer, algo="nan_loss_test", steps=2)
    before = _weights(trainer)
    with pytest.raises(FloatingPointError, match="not finite|nan"):
        trainer.train()
    for key, tensors in _weights(trainer).items():
        for name, value in tensors.items():
            assert torch.equal(value, before[key][name])


# ---------------------------------------------------------------------------- what reaches the loss
def test_zero_advantage_replies_reach_a_loss_that_is_not_zero_there(tmp_path, tokenizer):
    seen = []

    @register_algorithm("length_cost_test")
    class LengthCost:
        """Advantage 0 everywhere, and a loss that still pushes towards shorter replies."""

        def advantages(self, group):
            return np.zeros(len(group.returns))

        def loss(self, batch):
            seen.append(batch.logps.shape[0])
            return 0.01 * (batch.logps * batch.mask).sum() / batch.total_replies

    _trainer(tmp_path, tokenizer, algo="length_cost_test", steps=1).train()
    assert sum(seen) == 8  # 4 replies per agent, none skipped

    seen.clear()
    LengthCost.zero_loss_at_zero_advantage = True  # declared: now they may be skipped
    _trainer(tmp_path, tokenizer, algo="length_cost_test", steps=1, run_name="declared").train()
    assert seen == []


# ---------------------------------------------------------------------------- held-out evaluation
def test_evaluation_contract_rows_records_and_summary(tmp_path, tokenizer):
    cfg = tiny_config(tmp_path, steps=3, eval_problems=2, eval_every=2)
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), eval_env=CoopEnv(LetterTask()),
                      models=(build_model(tokenizer), tokenizer))
    summary_seen = []
    evaluate_now = trainer.evaluate_now
    trainer.evaluate_now = lambda: (summary_seen.append((tmp_path / "run" / "eval.json").exists()), evaluate_now())[1]
    trainer.train()
    assert summary_seen == [False, False, False]  # eval.json is written once, at the end
    run = tmp_path / "run"
    evals = [r for r in read_metrics(run) if "eval/reward" in r]
    assert [r["train/step"] for r in evals] == [0, 2, 3]
    assert all({"eval/reward", "eval/pass_rate"} <= set(r) for r in evals)
    assert not any("eval/tests_passed" in r or "eval/coop_rate" in r for r in evals)  # the letters task has neither
    for step in (0, 2, 3):
        records = [json.loads(x) for x in (run / "eval" / f"step_{step:05d}.jsonl").read_text().splitlines()]
        assert [r["task_id"] for r in records] == ["letters/0", "letters/1"]
        assert set(records[0]) == {"task_id", "reward", "solved", "tests_passed", "uses_helper", "helper_needed", "calls_helper",
                                   "eval_mode", "provenance"}
        assert {r["eval_mode"] for r in records} == {"batched"}
        assert records[0]["tests_passed"] is None and records[0]["uses_helper"] is None
    summary = json.loads((run / "eval.json").read_text())
    assert summary["steps"] == 3 and summary["problems"] == 2 and summary["task_ids"] == ["letters/0", "letters/1"]
    assert summary["before"]["train/step"] == 0 and summary["after"]["train/step"] == 3
    assert summary["after"]["eval/reward"] == evals[-1]["eval/reward"]


def test_no_duplicate_evaluation_when_the_last_step_is_an_eval_step(tmp_path, tokenizer):
    cfg = tiny_config(tmp_path, steps=2, eval_problems=1, eval_every=1)
    Trainer(cfg, env=CoopEnv(LetterTask()), eval_env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer)).train()
    assert [r["train/step"] for r in read_metrics(tmp_path / "run") if "eval/reward" in r] == [0, 1, 2]


def test_evaluation_never_falls_back_to_training_problems(tmp_path, tokenizer):
    with pytest.raises(ValueError, match="eval_env"):
        _trainer(tmp_path, tokenizer, eval_problems=2)
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


@pytest.mark.slow
def test_evaluation_reports_tests_and_cooperation_on_coop_humaneval(tmp_path, data_dir):
    import llm_coop_envs
    from tests.trainers.test_returns import HELPER, MAIN_NEAR_MISS
    from trainers.evaluate import evaluate
    from trainers.generation.base import Completion

    class Scripted:
        def generate(self, requests):
            return [[Completion(HELPER if r.agent == "helper" else MAIN_NEAR_MISS, (), ())] * r.num_samples
                    for r in requests]

    env = llm_coop_envs.make("coop_humaneval-v0", data_path=str(data_dir / "coop_humaneval.json"), split="all")
    result = evaluate(env, Scripted(), tiny_config(tmp_path), problems=1)
    assert result.task_ids == ("CoopHumanEval/0",)
    assert result.tests_passed == pytest.approx(0.8) and result.coop_rate == 1.0 and result.pass_rate == 0.0
    assert result.as_metrics()["eval/tests_passed"] == pytest.approx(0.8)
    assert result.records[0]["uses_helper"] is True
