"""``llm-coop bench`` never writes over the committed results unless ``--out`` names them, prints its
plan before training, compares reward and coop rate between two algorithms of the same team, says
why a cell is not comparable, and records each algorithm by its import path."""

from __future__ import annotations

import json

import pytest

from benchmarks.learning.cli import (
    COMMITTED_RESULTS, PROJECT_ROOT, algorithm_records, bench_command, estimate_run_s, plan_summary,
)
from benchmarks.learning.plan import Budget
from tests.benchmarks.learning_runs import write_meta, write_run

NONE = [False] * 6
HALF = [True, True, True, False, False, False]
BUDGET = Budget(steps=4, eval_every=2, eval_problems=6, sample_tokens=64)
LEADERBOARD = PROJECT_ROOT / COMMITTED_RESULTS / "learning" / "coop_basics-v0" / "results.json"


def _bench(runs_dir, algorithms):
    write_meta(runs_dir, BUDGET, algorithms=algorithms)
    for algo in algorithms:
        for seed in (0, 1):
            after = HALF if algo == algorithms[0] else NONE
            write_run(runs_dir, f"{algo}-seed{seed}", {0: NONE, 2: NONE, 4: after}, pair=algo != "grpo")


def test_the_default_report_goes_under_the_runs_folder_not_the_committed_results(tmp_path):
    committed = LEADERBOARD.read_bytes()
    runs_dir = tmp_path / "runs"
    _bench(runs_dir, ("magrpo", "grpo"))
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--resamples", "50", "-q"]) == 0
    assert (runs_dir / "results" / "results.md").is_file() and (runs_dir / "results" / "records").is_dir()
    assert LEADERBOARD.read_bytes() == committed


def test_the_committed_results_are_written_only_when_out_names_them(tmp_path, capsys):
    inside = PROJECT_ROOT / COMMITTED_RESULTS / "learning" / "not-a-real-env"
    assert bench_command(["--report-only", "--runs-dir", str(inside), "-q"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("llm-coop bench: ") and "committed results" in line and "--out" in line
    assert not inside.exists()


def test_two_pairs_compare_reward_and_coop_rate_and_a_pair_and_a_single_agent_say_why_not(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    _bench(runs_dir, ("magrpo", "maremax", "grpo"))
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    pairs, mixed = results["comparisons"]["magrpo - maremax"], results["comparisons"]["magrpo - grpo"]
    assert pairs["reward"]["mean"] == pytest.approx(1.0) and pairs["coop_rate"]["mean"] == pytest.approx(0.5)
    assert "reward" not in mixed and mixed["pass_rate"]["mean"] == pytest.approx(0.5)
    text = (out / "results.md").read_text(encoding="utf-8")
    table = text.split("| comparison |", 1)[1].split("## ", 1)[0]
    (pair_row,) = [line for line in table.splitlines() if line.startswith("| MAGRPO (two agents) − MAReMax, after")]
    assert "not comparable" not in pair_row and "+1.000 [" in pair_row
    (mixed_row,) = [line for line in table.splitlines() if line.startswith("| MAGRPO (two agents) − GRPO (single agent)")]
    assert "not comparable (a)" in mixed_row and "not comparable (b)" in mixed_row
    assert "(a) mean reward: MAGRPO (two agents) is a pair, GRPO (single agent) a single agent; " \
           "a pair's reward and a single agent's are on different scales" in table
    assert "(b) coop rate:" in table and "only a pair has a helper to cooperate with" in table


def test_the_plan_says_runs_budget_time_and_logs_before_training(tmp_path):
    meta = {"env": "coop_basics-v1", "algorithms": ["magrpo", "grpo"], "seeds": [0, 1], "budget": vars(Budget())}
    text = plan_summary(meta, tmp_path / "runs", tmp_path / "runs" / "results")
    assert "Plan: 4 runs (magrpo, grpo x seeds 0, 1) on coop_basics-v1" in text
    assert "held-out evaluation of 40 problems at steps 0, 5, 10" in text
    assert "Estimated time: about" in text and f"{tmp_path / 'runs' / 'magrpo-seed0.log'}" in text
    assert 5 * 60 < estimate_run_s(Budget()) < 20 * 60  # the docs' 8-15 minutes per run on a 2-core CPU


def test_algorithms_are_recorded_by_import_path_and_options():
    records = algorithm_records(["magrpo", "grpo"], ["algo_kwargs.normalize_std=true"])
    assert records["magrpo"]["import_path"] == "trainers.algorithms.magrpo:MAGRPO"
    assert records["grpo"]["import_path"] == "trainers.algorithms.grpo:GRPO"
    assert records["magrpo"]["options"] == {"normalize_std": True}


def test_marloo_beside_magrpo_is_one_row_unless_an_override_makes_them_differ(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    _bench(runs_dir, ("magrpo", "marloo"))
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    text = (out / "results.md").read_text(encoding="utf-8")
    assert "MARLOO has no row of its own" in text and "MAGRPO's row stands for both" in text
    assert "| MARLOO after" not in text and "− MARLOO, after" not in text
    assert "magrpo - marloo" in json.loads((out / "results.json").read_text(encoding="utf-8"))["comparisons"]
    meta = json.loads((runs_dir / "bench.json").read_text(encoding="utf-8"))
    (runs_dir / "bench.json").write_text(json.dumps({**meta, "overrides": ["algo_kwargs={normalize_std: true}"]}), encoding="utf-8")
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    text = (out / "results.md").read_text(encoding="utf-8")
    assert "| MARLOO after" in text and "no row of its own" not in text
