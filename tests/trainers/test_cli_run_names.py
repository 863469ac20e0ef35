"""A user's run is never replaced without an explicit flag: a preset's ``overwrite`` reuses only the
preset's own demo run name (and says so on screen); a second run under a name the user chose refuses
in one line, before any model loads, and leaves the first run's files as they were."""

from __future__ import annotations

import pytest

from tests.trainers.conftest import build_model
from trainers.cli import train_command
from trainers.config import load_config

TINY = ["--steps", "1", "--eval-problems", "0", "group_size=2", "sampling.max_new_tokens=8",
        "lora_r=2", "progress_bar=false", "tensorboard=false", "save_every=1"]


@pytest.fixture()
def tiny_model_dir(tmp_path, tokenizer):
    folder = tmp_path / "tiny-model"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _files(folder):
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


def test_a_named_run_never_inherits_the_presets_overwrite():
    assert load_config(preset="cpu-demo").overwrite  # the demo's own name: each demo replaces the last
    assert load_config(preset="cpu-demo", run_name="cpu-demo").overwrite
    assert not load_config(preset="cpu-demo", run_name="mine").overwrite
    assert not load_config(preset="cpu-demo", overrides=["run_name=mine"]).overwrite
    assert load_config(preset="cpu-demo", run_name="mine", overwrite=True).overwrite  # asked for on the command
    assert not load_config(preset="cpu-demo", overrides=["overwrite=false"]).overwrite


@pytest.mark.slow
def test_a_second_run_of_the_same_name_refuses_and_keeps_the_first(tmp_path, tiny_model_dir, capsys):
    common = ["--preset", "cpu-demo", *TINY, "--model", str(tiny_model_dir), "--run-dir", str(tmp_path / "runs")]
    assert train_command([*common, "--run-name", "X"]) == 0
    run = tmp_path / "runs" / "X"
    before = _files(run)
    assert "metrics.jsonl" in before and any(name.startswith("final/") for name in before)
    assert any(name.startswith("checkpoints/") for name in before)
    capsys.readouterr()

    assert train_command([*common, "--run-name", "X"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("llm-coop train: ") and str(run) in line and "--resume" in line and "fresh run_name" in line
    assert "Training" not in captured.out  # refused before the model loaded
    assert _files(run) == before  # every file of X is still there, untouched

    assert train_command([*common, "--run-name", "X", "--overwrite"]) == 0  # an explicit flag replaces it
    assert f"Replacing the previous run in {run} (--overwrite)" in capsys.readouterr().out


@pytest.mark.slow
def test_the_demo_run_name_is_reused_and_says_so(tmp_path, tiny_model_dir, capsys):
    common = ["--preset", "cpu-demo", *TINY, "--model", str(tiny_model_dir), "--run-dir", str(tmp_path)]
    assert train_command(common) == 0
    assert "Replacing" not in capsys.readouterr().out
    assert train_command(common) == 0
    out = capsys.readouterr().out
    assert f"Replacing the previous run in {tmp_path / 'cpu-demo'}" in out and "--run-name NAME keeps a run" in out
