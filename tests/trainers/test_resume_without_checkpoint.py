"""``--resume`` continues a run from its checkpoint and nothing else: a run whose checkpoints are gone
but whose results are not is refused in one line naming ``--overwrite`` (starting it again from step 0
would replace its evaluations, metrics and final weights), before any model loads; a run with no
results yet resumes (starts) as before; ``--overwrite`` starts it again on purpose."""

from __future__ import annotations

import shutil

import pytest

from tests.trainers.conftest import build_model
from trainers.cli import train_command
from trainers.run_folder import RunExistsError, prepare_run_folder

TINY = ["--steps", "1", "--eval-problems", "0", "group_size=2", "sampling.max_new_tokens=8",
        "lora_r=2", "progress_bar=false", "tensorboard=false", "save_every=1"]


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _finished_run_without_checkpoints(folder):
    """The files a finished run leaves, its ``checkpoints/`` folder deleted."""
    (folder / "eval").mkdir(parents=True)
    (folder / "metrics.jsonl").write_text('{"train/step": 1, "reward/mean": 0.5}\n', encoding="utf-8")
    (folder / "eval" / "step_00000.jsonl").write_text('{"task_id": "t", "reward": 0.0}\n', encoding="utf-8")
    (folder / "eval.json").write_text("{}", encoding="utf-8")
    (folder / "final").mkdir()
    (folder / "final" / "adapter.safetensors").write_bytes(b"weights")


def test_resume_without_a_checkpoint_refuses_and_names_overwrite(tmp_path):
    run = tmp_path / "X"
    _finished_run_without_checkpoints(run)
    (run / "checkpoints" / "step-00000001.partial").mkdir(parents=True)  # an unfinished save is no checkpoint
    with pytest.raises(RunExistsError, match=r"no checkpoint to resume .*--overwrite"):
        prepare_run_folder(str(tmp_path), "X", "magrpo", resume=True, overwrite=False)
    assert (run / "eval.json").is_file() and (run / "final").is_dir()
    # asked for: the run starts again from step 0, its results removed
    assert prepare_run_folder(str(tmp_path), "X", "magrpo", resume=True, overwrite=True) == run
    assert not (run / "eval.json").exists() and not (run / "final").exists()


def test_resume_with_a_checkpoint_or_nothing_to_lose_goes_ahead(tmp_path):
    empty = tmp_path / "fresh"
    empty.mkdir()
    (empty / "samples.jsonl").write_text("", encoding="utf-8")  # a run that never finished a step
    assert prepare_run_folder(str(tmp_path), "fresh", "magrpo", resume=True, overwrite=False) == empty
    assert prepare_run_folder(str(tmp_path), "never-made", "magrpo", resume=True, overwrite=False) == tmp_path / "never-made"
    run = tmp_path / "X"
    _finished_run_without_checkpoints(run)
    (run / "checkpoints" / "step-00000001").mkdir(parents=True)
    assert prepare_run_folder(str(tmp_path), "X", "magrpo", resume=True, overwrite=False) == run
    assert (run / "eval.json").is_file()


@pytest.fixture()
def tiny_model_dir(tmp_path, tokenizer):
    folder = tmp_path / "tiny-model"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_the_command_refuses_in_one_line_before_the_model_loads(tmp_path, tiny_model_dir, capsys):
    run = tmp_path / "runs" / "X"
    _finished_run_without_checkpoints(run)
    before = _files(run)
    argv = ["--preset", "cpu-demo", *TINY, "--model", str(tiny_model_dir), "--run-dir", str(tmp_path / "runs"),
            "--run-name", "X", "--resume"]
    assert train_command(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("llm-coop train: ") and str(run) in line and "--overwrite" in line
    assert "Traceback" not in captured.err and "Training" not in captured.out
    assert _files(run) == before


@pytest.mark.slow
def test_a_real_run_whose_checkpoints_were_deleted_is_kept(tmp_path, tiny_model_dir, capsys):
    common = ["--preset", "cpu-demo", *TINY, "--model", str(tiny_model_dir), "--run-dir", str(tmp_path / "runs"), "--run-name", "X"]
    assert train_command(common) == 0
    run = tmp_path / "runs" / "X"
    shutil.rmtree(run / "checkpoints")
    before = _files(run)
    capsys.readouterr()
    assert train_command([*common, "--resume"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert _files(run) == before
    assert train_command([*common, "--resume", "--overwrite"]) == 0
    assert "No checkpoint to resume" in capsys.readouterr().out
    assert (run / "checkpoints").is_dir()
