"""``llm-coop bench`` reading run folders in the trainer's format: aggregation, report, resumability."""

import json
import sys

import pytest

from benchmarks.learning import aggregate as agg
from benchmarks.learning.cli import bench_command, collect_runs
from benchmarks.learning.plan import Budget, RunSpec, plan, train_command
from benchmarks.learning.records import Run, measured_budget, read_run
from benchmarks.learning.runner import run_all, run_one
from tests.benchmarks.learning_runs import TASKS, write_meta, write_run

NONE = [False] * 6
HALF = [True, True, True, False, False, False]
BUDGET = Budget(steps=4, eval_every=2, eval_problems=6, sample_tokens=64)


def _runs(tmp_path, magrpo_after=HALF, grpo_after=NONE):
    for seed in (0, 1):
        write_run(tmp_path, f"magrpo-seed{seed}", {0: NONE, 2: NONE, 4: magrpo_after})
        write_run(tmp_path, f"grpo-seed{seed}", {0: NONE, 2: NONE, 4: grpo_after}, pair=False)
    return [read_run(Run(s.name, s.algo, s.seed), tmp_path / s.name) for s in plan(["magrpo", "grpo"], [0, 1])]


def test_aggregate_gives_before_after_change_and_comparison(tmp_path):
    summary = agg.aggregate(_runs(tmp_path), ["magrpo", "grpo"], resamples=500)
    magrpo = summary["algorithms"]["magrpo"]["metrics"]
    assert summary["task_ids"] == TASKS
    assert magrpo["pass_rate"]["before"] == {"mean": 0.0, "low": 0.0, "high": 0.0}
    assert magrpo["pass_rate"]["after"]["mean"] == 0.5
    assert magrpo["pass_rate"]["change"]["mean"] == 0.5 and magrpo["pass_rate"]["change"]["low"] > 0
    assert magrpo["acc"]["after"]["mean"] == pytest.approx(0.75)
    assert magrpo["reward"]["after"]["mean"] == pytest.approx(2.0)
    assert magrpo["coop_rate"]["after"]["mean"] == 0.5
    grpo = summary["algorithms"]["grpo"]["metrics"]
    assert grpo["coop_rate"] is None  # a single agent has no helper to use
    assert grpo["pass_rate"]["change"] == {"mean": 0.0, "low": 0.0, "high": 0.0}
    assert summary["comparisons"]["magrpo - grpo"]["pass_rate"]["mean"] == 0.5
    assert "reward" not in summary["comparisons"]["magrpo - grpo"]


def test_curves_have_a_point_per_evaluation_step(tmp_path):
    summary = agg.aggregate(_runs(tmp_path), ["magrpo", "grpo"], resamples=200)
    curve = summary["algorithms"]["magrpo"]["curves"]["pass_rate"]
    assert [p["step"] for p in curve] == [0, 2, 4]
    assert [p["mean"] for p in curve] == [0.0, 0.0, 0.5]


def test_measured_budget_sums_the_training_rows(tmp_path):
    write_run(tmp_path, "magrpo-seed0", {0: NONE, 2: NONE, 4: HALF}, tokens_per_step=120, env_steps_per_step=4)
    run = read_run(Run("magrpo-seed0", "magrpo", 0), tmp_path / "magrpo-seed0")
    assert measured_budget(run) == {"steps": 4, "generated_tokens": 480, "env_steps": 16, "eval_episodes": 18, "train_s": 8.0}


def test_a_run_without_per_problem_evaluations_is_failed(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "eval.json").write_text(json.dumps({"before": {}, "after": {}}))
    run = read_run(Run("old", "magrpo", 0), tmp_path / "old")
    assert run.status == "failed" and "evaluations" in run.error


def test_report_only_writes_the_files_and_lists_a_failed_run(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, BUDGET)
    for seed in (0, 1):
        write_run(runs_dir, f"magrpo-seed{seed}", {0: NONE, 2: NONE, 4: HALF})
    write_run(runs_dir, "grpo-seed0", {0: NONE, 2: NONE, 4: NONE}, pair=False)
    (runs_dir / "grpo-seed1.run.json").write_text(json.dumps({"status": "failed", "error": "exit status 1; boom", "wall_s": 3.0}))
    code = bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "200", "-q",
                          "--docs-images", str(tmp_path / "docs")])
    assert code == 1  # a failed run makes the command fail, after the report is written
    text = (out / "results.md").read_text()
    assert "untrained pair" in text and "untrained single agent" in text
    assert "| grpo-seed1 | failed | 3 | exit status 1; boom |" in text
    assert "Not finished, and left out of every number above: grpo-seed1" in text
    assert "50.0 % [" in text
    assert "llm-coop bench coop_basics-v0 --algos magrpo,grpo --seeds 0 1 --steps 4 " in text
    assert "| `llm-coop bench` | load average: 1.00 | load average: 2.00 |" in text
    results = json.loads((out / "results.json").read_text())
    assert results["algorithms"]["grpo"]["seeds"] == [0]
    assert (out / "curves.png").stat().st_size > 0
    assert (tmp_path / "docs" / "learning_coop_basics-v0_curves.png").read_bytes() == (out / "curves.png").read_bytes()


def test_report_only_without_a_benchmark_says_what_to_do(tmp_path, capsys):
    assert bench_command(["--report-only", "--runs-dir", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "run without --report-only first" in capsys.readouterr().err


def test_budget_gives_the_single_agent_the_whole_token_cap(tmp_path):
    single = train_command(RunSpec("grpo", 1), "coop_basics-v0", BUDGET, tmp_path)
    pair = train_command(RunSpec("magrpo", 1), "coop_basics-v0", BUDGET, tmp_path)
    assert "sampling.max_new_tokens=64" in single and "env_kwargs.team=single" in single
    assert "sampling.max_new_tokens=32" in pair and not any(a.startswith("env_kwargs.team") for a in pair)
    for command in (single, pair):
        assert "group_size=4" in command and "seed=1" in command
        # The trainer does not evaluate: it saves a checkpoint at every evaluation point for the bench.
        assert command[command.index("--eval-problems") + 1] == "0" and "save_every=2" in command


def test_budget_refuses_bad_values():
    with pytest.raises(ValueError, match="even"):
        Budget(sample_tokens=33)
    with pytest.raises(ValueError, match="group-size"):
        Budget(group_size=1)


def test_runner_records_failures_and_skips_finished_runs(tmp_path):
    done, broken = RunSpec("magrpo", 0), RunSpec("grpo", 0)
    write_run(tmp_path, done.name, {0: NONE, 4: HALF})
    fail = [sys.executable, "-c", "import sys; print('something broke'); sys.exit(3)"]
    never = [sys.executable, "-c", "raise SystemExit('a finished run must not be started again')"]
    run_all([done, broken], [never, fail], tmp_path, quiet=True)
    outcome = json.loads((tmp_path / "grpo-seed0.run.json").read_text())
    assert outcome["status"] == "failed" and "exit status 3" in outcome["error"] and "something broke" in outcome["error"]
    assert not (tmp_path / "magrpo-seed0.run.json").exists()


def test_runner_kills_a_run_past_its_timeout(tmp_path):
    outcome = run_one(RunSpec("magrpo", 0), [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, timeout_s=1)
    assert outcome["status"] == "failed" and "timed out" in outcome["error"]


def test_a_run_that_exits_cleanly_without_results_is_failed(tmp_path):
    outcome = run_one(RunSpec("magrpo", 0), [sys.executable, "-c", "pass"], tmp_path, timeout_s=None)
    assert outcome["status"] == "failed" and "without held-out records" in outcome["error"]


def test_collect_runs_marks_unrun_runs_missing(tmp_path):
    write_meta(tmp_path, BUDGET, seeds=(0,))
    runs = collect_runs(json.loads((tmp_path / "bench.json").read_text()), tmp_path)
    assert [(r.name, r.status) for r in runs] == [("magrpo-seed0", "missing"), ("grpo-seed0", "missing")]


def test_resuming_with_other_settings_is_refused(tmp_path, capsys):
    write_meta(tmp_path, BUDGET)
    write_run(tmp_path, "magrpo-seed0", {0: [False] * 4, 2: [True] * 4})  # a run to keep (no records: no refusal)
    code = bench_command(["coop_basics-v0", "--runs-dir", str(tmp_path), "--steps", "99", "-q"])
    assert code == 2 and "other settings (budget differ)" in capsys.readouterr().err


def test_llm_coop_dispatches_bench(tmp_path, capsys):
    from llm_coop_envs.cli import main

    assert main(["bench", "--report-only", "--runs-dir", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no benchmark in" in capsys.readouterr().err


def test_the_reproduce_command_parses_back_to_the_same_budget(tmp_path):
    import shlex

    from benchmarks.learning.cli import _parser
    from benchmarks.learning.report import reproduce_command

    write_meta(tmp_path, BUDGET, seeds=(0, 3))
    meta = json.loads((tmp_path / "bench.json").read_text())
    args = _parser().parse_args(shlex.split(reproduce_command(meta))[2:])
    assert args.seeds == [0, 3] and args.algos == "magrpo,grpo" and args.env == "coop_basics-v0"
    parsed = Budget.from_dict({name: getattr(args, name) for name in meta["budget"]})
    assert parsed == BUDGET


def test_the_report_shows_what_the_policy_wrote_at_the_first_and_last_step(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, BUDGET, algorithms=("magrpo",), seeds=(0,))
    write_run(runs_dir, "magrpo-seed0", {0: NONE, 4: HALF})
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    text = (out / "results.md").read_text()
    section = text.split("## What the policy wrote (first and last training step)")[1]
    assert "**magrpo-seed0, step 1**: reward 1.000 (structure 1.00)" in section
    assert "**magrpo-seed0, step 4**: reward 4.000" in section
    assert "> def aux():  # step 1\n>\n>     return 0" in section  # verbatim, the first sample of the step
    assert "# step 2" not in section and "return 1" not in section
    assert json.loads((out / "results.json").read_text())["runs"][0]["samples"][1]["step"] == 4


def test_a_writing_run_without_test_counts_is_reported_by_solved_rate_and_reward(tmp_path):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, BUDGET, algorithms=("magrpo",), seeds=(0, 1), env="tldr-v1")
    for seed in (0, 1):
        run_dir = write_run(runs_dir, f"magrpo-seed{seed}", {0: NONE, 4: HALF})
        for path in (run_dir / "eval").glob("*.jsonl"):  # a writing env counts no tests and has no helper
            rows = [{**json.loads(line), "tests_passed": None, "uses_helper": None} for line in path.read_text().splitlines()]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    header = next(line for line in (out / "results.md").read_text().splitlines() if line.startswith("| agents |"))
    assert header == "| agents | seeds | held-out solved rate (every level met) | mean reward |"
    curves = json.loads((out / "results.json").read_text())["algorithms"]["magrpo"]["curves"]
    assert [p["step"] for p in curves["reward"]] == [0, 4]
    assert (out / "curves.png").stat().st_size > 0


def test_the_benchmark_meta_carries_the_provenance_record():
    import llm_coop_envs
    from benchmarks.learning.cli import bench_provenance
    from llm_coop_envs.lm.cache import PACKAGED_MODEL_ID

    record = bench_provenance("coop_basics-v0", BUDGET)
    assert record["package_version"] == llm_coop_envs.__version__ and record["env"]["id"] == "coop_basics-v0"
    assert record["model"]["id"] == PACKAGED_MODEL_ID and "gguf_sha256" in record["model"]["build"]
    assert record["sampling"] == {"temperature": BUDGET.temperature, "top_p": BUDGET.top_p, "sample_tokens": 64,
                                  "stop_after_code": True}


def test_adding_an_algorithm_reuses_the_finished_runs(tmp_path):
    from benchmarks.learning.cli import _parser, _start

    write_meta(tmp_path, Budget(), algorithms=("magrpo", "grpo"), seeds=(0, 1))
    write_run(tmp_path, "grpo-seed1", {0: NONE, 2: NONE}, pair=False)  # a finished run: the folder is kept
    argv = ["coop_basics-v0", "--runs-dir", str(tmp_path), "--algos", "magrpo,marloo", "--seeds", "0", "--steps", "10",
            "--problems-per-step", "1", "--eval-every", "5", "--eval-problems", "40"]
    meta = _start(_parser().parse_args(argv), argv, tmp_path)
    assert meta["algorithms"] == ["magrpo", "marloo", "grpo"] and meta["seeds"] == [0, 1]
    assert [s["command"] for s in meta["sessions"]][-1].endswith("--eval-every 5 --eval-problems 40")
