from benchmarks.perf import collect as perf


def test_missing_benchmarks_are_skipped_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(perf, "BENCHMARKS", {"does_not_exist": "nothing"})
    out = tmp_path / "perf.md"
    assert perf.main(["--out", str(out)]) == 0
    text = out.read_text()
    assert "| does_not_exist | skipped: the benchmark does not exist yet |" in text
    assert "python -m benchmarks.perf" in text


def test_a_failing_benchmark_is_reported(tmp_path, monkeypatch):
    outcome = perf.run_benchmark("collect", ["--only", "bogus"], timeout_s=60)  # argparse rejects the choice
    assert outcome.status == "failed (exit 2)" and "invalid choice" in outcome.output_tail
