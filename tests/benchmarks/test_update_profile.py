"""The update profile's arithmetic: matrix products apart from everything else, their speed from the
profiler's FLOP counts (the profile itself runs in the benchmark, not here)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.perf.update_profile import summarise


def event(key: str, self_us: float, flops: float = 0.0):
    return SimpleNamespace(key=key, self_cpu_time_total=self_us, flops=flops)


def test_matrix_products_are_counted_apart_from_the_other_operators():
    events = [event("aten::mm", 3e6, 3e11), event("aten::addmm", 1e6, 1e11), event("aten::bmm", 1e6, 1e11),
              event("aten::softmax", 2e6), event("aten::copy_", 3e6)]
    summary = summarise(events)
    assert summary["matmul_s"] == pytest.approx(5.0) and summary["total_s"] == pytest.approx(10.0)
    assert summary["matmul_share"] == pytest.approx(0.5)
    assert summary["gflop"] == pytest.approx(500.0) and summary["matmul_gflops"] == pytest.approx(100.0)


def test_a_profile_without_products_reports_zero_speed_not_an_error():
    summary = summarise([event("aten::add", 1e6)])
    assert summary["matmul_share"] == 0.0 and summary["matmul_gflops"] == 0.0
    assert summarise([]) == {"matmul_s": 0.0, "total_s": 0.0, "matmul_share": 0.0, "matmul_gflops": 0.0, "gflop": 0.0}
