import json

from benchmarks.reporting import markdown_table, plot_learning_curves, plot_pass_at_k
from benchmarks.reporting.plots import read_metrics_jsonl

SUMMARY = {
    "pass_at_k": {"1": 0.25, "3": 0.5},
    "accuracy_at_k": {"1": 0.4, "3": None},
    "cooperation_rate": 0.75,
    "solved_rate": 0.25,
    "reward": 1.5,
    "efficiency": {"tokens_per_episode": 80.0, "critical_path_tokens_per_episode": 50.0, "generation_latency_s_per_episode": 1.2},
}


def test_markdown_table():
    table = markdown_table({"magrpo": SUMMARY, "single": SUMMARY | {"cooperation_rate": None}})
    assert table.splitlines()[0].startswith("| method | pass@1 | pass@3 | acc@1 | acc@3 | coop. rate")
    assert "| magrpo | 25.00% | 50.00% | 40.00% | – | 75.00% |" in table
    assert markdown_table({}) == "(no results)\n"


def test_plots(tmp_path):
    assert plot_pass_at_k({"a": SUMMARY, "b": SUMMARY}, tmp_path / "bars.png").stat().st_size > 1000
    assert plot_pass_at_k({"a": {"pass_at_k": {}}}, tmp_path / "none.png") is None
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("\n".join(json.dumps({"step": s, "reward/mean": s / 10}) for s in range(5)) + "\nnot json\n")
    rows = read_metrics_jsonl(metrics)
    assert len(rows) == 5
    assert plot_learning_curves({"magrpo": rows}, tmp_path / "curve.png", keys=("reward/mean", "missing")).exists()
    assert plot_learning_curves({"magrpo": rows}, tmp_path / "no.png", keys=("missing",)) is None
