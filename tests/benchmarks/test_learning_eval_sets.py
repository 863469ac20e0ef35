"""``llm-coop bench`` with extra held-out sets (``--eval-set``), in parts (``--max-runs``), and the
training signal its report shows: run folders written by hand in the bench's own format."""

import json
import sys

import pytest

from benchmarks.learning.cli import bench_command
from benchmarks.learning.plan import Budget, RunSpec, parse_eval_set, plan
from benchmarks.learning.runner import is_finished, run_all
from tests.benchmarks.learning_runs import write_meta

BUDGET = Budget(steps=2, eval_every=2, eval_problems=4, sample_tokens=64)
FAMILIES = {"split": "heldout_families", "level": 1}


def _records(task_prefix, solved):
    return [{"task_id": f"{task_prefix}/{i}", "reward": 3.0 if ok else 1.0, "solved": ok,
             "tests_passed": 1.0 if ok else 0.0, "uses_helper": ok, "main_calls_helper": ok,
             "components": {"tests": 2.0 if ok else 0.0, "syntax": 1.0}, "replies": [{"helper": "h", "main": "m"}]}
            for i, ok in enumerate(solved)]


def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _bench_run(runs_dir, name, main_after, families_after):
    run_dir = runs_dir / name
    for folder, prefix, solved in (("bench_eval", "test", main_after), ("bench_eval-families", "fam", families_after)):
        _write(run_dir / folder / "step_00002.jsonl", _records(prefix, solved))
        (run_dir / folder / "setting.json").write_text("{}")
    rows = [{"train/step": step, "reward/mean": 1.0, "train/groups": 4, "train/groups_tests_vary": vary,
             "agent/main/grad_norm": 2.0, "agent/main/grad_clipped": 1.0, "agent/helper/grad_norm": 0.5,
             "agent/helper/grad_clipped": 0.0, "perf/step_s": 3.0} for step, vary in ((1, 3), (2, 1))]
    _write(run_dir / "metrics.jsonl", rows)


def _benchmark(runs_dir):
    write_meta(runs_dir, BUDGET, algorithms=("magrpo",), seeds=(0, 1), env="coop_procedural-v0")
    meta = json.loads((runs_dir / "bench.json").read_text())
    meta["eval_sets"] = {"families": FAMILIES}
    meta["untrained"] = {"magrpo": "untrained/pair-main.jsonl"}
    meta["untrained_sets"] = {"families": {"magrpo": "untrained/pair-families.jsonl"}}
    (runs_dir / "bench.json").write_text(json.dumps(meta))
    _write(runs_dir / "untrained/pair-main.jsonl", _records("test", [False] * 4))
    _write(runs_dir / "untrained/pair-families.jsonl", _records("fam", [False] * 4))
    for seed in (0, 1):
        _bench_run(runs_dir, f"magrpo-seed{seed}", [True, True, False, False], [True, False, False, False])


def _report(tmp_path):
    """The report of the hand-written benchmark, written to ``tmp_path/out``."""
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    _benchmark(runs_dir)
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "200", "-q"]) == 0
    return out


def test_each_extra_held_out_set_gets_its_own_report(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    _benchmark(runs_dir)
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "200", "-q"]) == 0
    main, families = json.loads((out / "results.json").read_text()), json.loads((out / "families/results.json").read_text())
    assert main["algorithms"]["magrpo"]["metrics"]["pass_rate"]["after"]["mean"] == 0.5
    assert families["algorithms"]["magrpo"]["metrics"]["pass_rate"]["after"]["mean"] == 0.25
    assert main["task_ids"][0].startswith("test/") and families["task_ids"][0].startswith("fam/")
    text = (out / "families/results.md").read_text()
    assert "extra held-out set `families`" in text and json.dumps(FAMILIES) in text
    assert "--eval-set 'families=" in (out / "results.md").read_text()  # the reproduce command names the set


def test_the_report_shows_the_training_signal_per_run(tmp_path):
    out = _report(tmp_path)
    text = (out / "results.md").read_text()
    assert "| magrpo-seed0 | 2 | 8 | 4 (50 %) | 1.25 | 50 % |" in text
    log = json.loads((out / "records/runs.json").read_text())[0]["train_log"]
    assert [row["train/groups_tests_vary"] for row in log] == [3, 1] and "perf/step_s" in log[0]
    # recomputed from the records alone, the table is the same
    from benchmarks.learning.recompute import main as recompute_main

    (out / "results.md").unlink()
    assert recompute_main([str(out), "--resamples", "200"]) == 0
    assert "| magrpo-seed0 | 2 | 8 | 4 (50 %) | 1.25 | 50 % |" in (out / "results.md").read_text()


def test_a_run_is_finished_only_when_every_held_out_set_is_evaluated(tmp_path):
    _benchmark(tmp_path)
    spec = RunSpec("magrpo", 0)
    assert is_finished(tmp_path, spec, ["families"]) and is_finished(tmp_path, spec)
    (tmp_path / spec.name / "bench_eval-families" / "setting.json").unlink()
    assert not is_finished(tmp_path, spec, ["families"]) and is_finished(tmp_path, spec)


def test_max_runs_trains_only_the_next_runs_of_the_plan(tmp_path):
    specs = plan(["magrpo", "grpo"], [0, 1])
    fail = [sys.executable, "-c", "raise SystemExit(3)"]
    run_all(specs, [fail] * 4, tmp_path, quiet=True, max_runs=1)
    assert sorted(p.name for p in tmp_path.glob("*.run.json")) == ["magrpo-seed0.run.json"]
    run_all(specs, [fail] * 4, tmp_path, quiet=True, max_runs=2)  # a failed run is not finished: tried again
    assert sorted(p.name for p in tmp_path.glob("*.run.json")) == ["grpo-seed0.run.json", "magrpo-seed0.run.json"]


def test_a_bench_in_parts_fails_only_for_a_failed_run():
    from benchmarks.learning.cli import _exit_code
    from benchmarks.learning.records import Run

    done, missing, failed = (Run("r", "magrpo", 0, status=s) for s in ("done", "missing", "failed"))
    assert _exit_code([done, missing], partial=True) == 0  # --max-runs: the rest comes later
    assert _exit_code([done, missing], partial=False) == 1  # a full bench left a run out
    assert _exit_code([done, failed], partial=True) == 1


@pytest.mark.parametrize("text, name, kwargs", [
    ("families={split: heldout_families, level: 1}", "families", FAMILIES),
    ('big={"split": "test", "problems_per_cell": 30}', "big", {"split": "test", "problems_per_cell": 30}),
])
def test_eval_sets_parse(text, name, kwargs):
    assert parse_eval_set(text) == (name, kwargs)


@pytest.mark.parametrize("text", ["families", "=x", "a b={split: test}", "f=[1, 2]", "f={a: [}", "f="])
def test_bad_eval_sets_are_refused_in_one_line(text):
    with pytest.raises(ValueError, match="--eval-set"):
        parse_eval_set(text)


def test_a_held_out_set_the_env_refuses_stops_the_bench_before_training(tmp_path, capsys):
    code = bench_command(["coop_procedural-v0", "--runs-dir", str(tmp_path), "--algos", "magrpo", "--seeds", "0",
                          "--eval-set", "families={split: heldout_familes}", "-q"])
    assert code == 2 and "--eval-set families: split must be one of" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert bench_command(["--runs-dir", str(tmp_path), "--max-runs", "0", "-q"]) == 2


def test_the_report_gives_the_churn_and_plots_the_training_signal(tmp_path):
    out = _report(tmp_path)
    text = (out / "results.md").read_text()
    # two of four problems solved after, none before, on both seeds
    assert "50.0 % of the problems changed outcome (solved after but not before: 50.0 %; before but not after: 0.0 %)" in text
    assert (out / "training.png").stat().st_size > 0 and "(training.png)" in text
    results = json.loads((out / "results.json").read_text())
    assert results["runs"][0]["training"] == [{"step": 1, "reward": 1.0, "tests_vary_share": 0.75},
                                              {"step": 2, "reward": 1.0, "tests_vary_share": 0.25}]


def test_untrained_only_evaluates_and_stops_with_the_session_recorded(tmp_path, monkeypatch):
    from benchmarks.learning import cli, runner

    seen = []
    monkeypatch.setattr(cli, "evaluate_untrained", lambda meta, *a: seen.append(meta["algorithms"]))
    monkeypatch.setattr(runner, "run_all", lambda *a, **k: pytest.fail("nothing may train"))
    assert bench_command(["coop_procedural-v0", "--runs-dir", str(tmp_path), "--algos", "magrpo", "--seeds", "0",
                          "--untrained-only", "-q"]) == 0
    assert seen == [["magrpo"]]
    (session,) = json.loads((tmp_path / "bench.json").read_text())["sessions"]
    assert session["uptime_end"] and session["command"].endswith("--untrained-only -q")
