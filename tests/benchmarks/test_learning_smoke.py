"""The whole ``llm-coop bench`` pipeline with a tiny random model: two trainer processes, report, resume."""

import dataclasses
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from trainers.config import TrainConfig  # noqa: E402

from benchmarks.learning.cli import bench_command  # noqa: E402

pytestmark = pytest.mark.skipif(
    "eval_every" not in {f.name for f in dataclasses.fields(TrainConfig)},
    reason="needs the trainer's periodic held-out evaluation (TrainConfig.eval_every) that the benchmark reads",
)


@pytest.fixture()
def tiny_model_dir(tmp_path):
    from tests.trainers.conftest import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    folder = tmp_path / "tiny-model"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_bench_trains_both_algorithms_and_reports(tmp_path, tiny_model_dir, data_dir, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the trainer processes share two cores with everything else
    monkeypatch.chdir(tmp_path)  # the project root of this benchmark: results files name paths relative to it
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    argv = [
        "coop_humaneval-v0", "--algos", "magrpo,grpo", "--seeds", "0", "--steps", "2", "--eval-every", "1",
        "--eval-problems", "2", "--group-size", "2", "--sample-tokens", "16", "--problems-per-step", "1", "--model", str(tiny_model_dir),
        "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "200", "-q", "--set", "env_workers=1",
    ]
    assert bench_command(argv) == 0, [p.read_text()[-2000:] for p in runs_dir.glob("*.log")]
    results = json.loads((out / "results.json").read_text())
    assert [run["status"] for run in results["runs"]] == ["done", "done"]
    for algo in ("magrpo", "grpo"):
        summary = results["algorithms"][algo]
        assert set(summary["metrics"]["pass_rate"]) == {"before", "after", "change"}
        assert [p["step"] for p in summary["curves"]["pass_rate"]] == [0, 1, 2]
        (budget,) = summary["budget"]
        assert budget["env_steps"] == 2 * 1 * 2  # steps x problems per step x G, the same for both
        assert 0 < budget["generated_tokens"] <= 2 * 2 * 16  # within the cap summed over agents
    assert (out / "results.md").is_file() and (out / "curves.png").is_file()
    _check_records(tmp_path, runs_dir, out, results)
    logs = {path: path.stat().st_mtime_ns for path in runs_dir.glob("*.log")}
    assert bench_command(argv) == 0  # resumed: both runs are finished, none is started again
    assert {path: path.stat().st_mtime_ns for path in runs_dir.glob("*.log")} == logs


def _check_records(tmp_path, runs_dir, out, results):
    """The untrained team is evaluated once per team; the records are full; the table recomputes."""
    from benchmarks.learning.recompute import main as recompute_main

    assert len(list((runs_dir / "untrained").glob("*.jsonl"))) == 2  # the pair and the single agent
    runs = json.loads((out / "records" / "runs.json").read_text())
    assert {run["evals"]["0"] for run in runs} == {"untrained-pair.jsonl", "untrained-single.jsonl"}
    record = json.loads((out / "records" / "magrpo-seed0" / "step_00002.jsonl").read_text().splitlines()[0])
    assert {"task_id", "reward", "solved", "tests_passed", "main_calls_helper", "components", "replies"} <= set(record)
    assert set(record["replies"][0]) == {"helper", "main"} and "tests" in record["components"]
    assert set(results["algorithms"]["magrpo"]["components"]) >= {"tests", "syntax"}
    before = (out / "results.json").read_text()
    assert str(tmp_path) not in before and str(tmp_path) not in (out / "results.md").read_text()
    assert recompute_main([str(out)]) == 0
    assert (out / "results.json").read_text() == before  # the committed table is what the records give
