"""The step-floor benchmark's arithmetic: which profiler events make the update's floor, and how the
report forms its ratios (the measurements themselves run in the benchmark, not here)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.perf.step_floor import kernel_seconds, report


def event(key: str, self_us: float, total_us: float | None = None):
    return SimpleNamespace(key=key, self_cpu_time_total=self_us, cpu_time_total=self_us if total_us is None else total_us)


def test_products_and_attention_count_by_self_time_and_vocabulary_passes_by_total_time():
    events = [
        event("aten::mm", 3e6, 9e6), event("aten::addmm", 1e6),
        event("aten::_scaled_dot_product_flash_attention_for_cpu", 0.5e6),
        event("aten::_scaled_dot_product_flash_attention_for_cpu_backward", 0.5e6),
        event("aten::logsumexp", 0.1e6, 0.4e6),
        event("autograd::engine::evaluate_function: _ScoredTokensBackward", 0.1e6, 0.6e6),
        event("aten::mul", 2e6), event("aten::copy_", 1e6),  # the work around the kernels: not floor
    ]
    assert kernel_seconds(events) == pytest.approx(3 + 1 + 0.5 + 0.5 + 0.4 + 0.6)
    assert kernel_seconds([]) == 0.0


def test_the_report_forms_each_ratio_within_its_repeat():
    runs = {name: [1.0, 1.0, 1.0] for name in (
        "rollout", "update", "decode", "prefill", "update_kernels", "update_profiled", "gemm", "stream")}
    runs |= {"step": [10.0, 20.0, 30.0], "trl": [20.0, 20.0, 20.0], "floor": [5.0, 10.0, 15.0],
             "separate": [4.0, 4.0, 4.0], "merged": [2.0, 4.0, 6.0]}
    text = report(runs, ("up 1", "up 2"), "python -m benchmarks.perf.step_floor --repeats 3", 128)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("|")}
    assert "**1.00× (0.50–1.50×, 3 repeats)**" in rows["ours / TRL"]
    assert "**0.50× (0.25–0.75×, 3 repeats)**" in rows["floor / TRL"]
    assert "2.00× (2.00–2.00×, 3 repeats)" in rows["ours / floor"]
    assert "1.00× (0.50–1.50×, 3 repeats)" in rows["merged / separate"]
    assert "`up 1`" in text and "`up 2`" in text


def test_the_decode_floor_runs_the_engine_weights_of_a_model_with_two_adapters():
    """The floor packs the owned model's own weights and adapters: this keeps the benchmark in step with them."""
    pytest.importorskip("peft")
    from benchmarks.perf.step_floor import decode_kernels
    from tests.lm.test_owned_model import tiny_llama, with_adapters

    model = with_adapters(tiny_llama())
    slots = {"helper": SimpleNamespace(model=model, adapter="first"), "main": SimpleNamespace(model=model, adapter="second")}
    trainer = SimpleNamespace(policies=SimpleNamespace(slots=slots, prompt_ids=lambda agent, observation: (1, 2, 3)))
    assert decode_kernels(trainer, tokens=3) > 0
