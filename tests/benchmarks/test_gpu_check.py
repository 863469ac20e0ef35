"""benchmarks/perf/gpu_check.py runs on the CPU too (``--gpu cpu`` compares the CPU with itself), so its
logic is checked here with a tiny model; the GPU numbers are in benchmarks/results/gpu_check.md."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from benchmarks.perf import gpu_check  # noqa: E402
from tests.trainers.conftest import build_model, build_tokenizer  # noqa: E402


@pytest.fixture()
def model_path(tmp_path):
    tokenizer = build_tokenizer()
    folder = tmp_path / "tiny"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_numerics_of_the_cpu_against_itself_agree_exactly(model_path):
    result = gpu_check.numerics(model_path, tokens=3, samples=1, gpu="cpu")
    assert result["greedy_fp32_cuda_equals_cpu"] == {"helper": True, "main": True}
    assert result["argmax_along_replies_fp32_cuda_vs_cpu"]["same_argmax"] == result["argmax_along_replies_fp32_cuda_vs_cpu"]["positions"]
    assert result["loss_fp32_cuda_vs_cpu"]["logp_max_abs_diff"] == 0.0
    assert result["loss_fp32_cuda_vs_cpu"]["grad_max_rel_l2_diff"] == 0.0
    assert result["loss_fp32_cuda_vs_cpu"]["grad_tensors"] > 0
    assert result["scored_rows_per_agent"] == {"helper": 2, "main": 2}


def test_timing_reports_the_trainers_step_and_the_weights_change(model_path, tmp_path):
    result = gpu_check.timing(model_path, "float32", tokens=2, steps=1, run_dir=str(tmp_path / "runs"), gpu="cpu")
    assert result["generation_rows_lengths"] == [2] and result["timed_steps"] == 1
    assert result["step_s_median"] > 0 and result["peak_gpu_memory_mb"] is None
    assert set(result["trained_weights_change"]) == {"helper", "main"}
    assert all(change["tensors"] > 0 and change["l2_change"] >= 0 for change in result["trained_weights_change"].values())
    assert all("perf/update_s" in row for row in result["steps"])
