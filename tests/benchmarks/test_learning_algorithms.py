"""``llm-coop bench --algos``: any algorithm the trainer's registry resolves, named or ``module:Class``."""

import json
import textwrap

import pytest

from benchmarks.learning.cli import bench_command
from benchmarks.learning.plan import Budget, RunSpec, check_algorithms, plan, team, train_command
from benchmarks.learning.report import label
from tests.benchmarks.learning_runs import write_meta, write_run

NONE = [False] * 6
HALF = [True, True, True, False, False, False]
BUDGET = Budget(steps=4, eval_every=2, eval_problems=6, sample_tokens=64)
BUDGET_FLAGS = ["--steps", "4", "--eval-every", "2", "--eval-problems", "6", "--sample-tokens", "64", "--problems-per-step", "1"]

PLUGINS = '''
from trainers.algorithms import AlgorithmBase, leave_one_out, policy_gradient_loss


class PairLOO(AlgorithmBase):
    def advantages(self, group):
        return leave_one_out(group.returns)

    def loss(self, batch):
        return policy_gradient_loss(batch)


class SoloLOO(PairLOO):
    single_agent = True


class NoLoss:
    def advantages(self, group):
        return group.returns
'''


@pytest.fixture()
def plugins(tmp_path, monkeypatch):
    """A user's module of algorithms, importable as ``bench_plugins_demo``."""
    (tmp_path / "bench_plugins_demo.py").write_text(textwrap.dedent(PLUGINS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "bench_plugins_demo"


def test_the_team_is_the_one_the_algorithm_declares(plugins):
    assert team("magrpo") == "pair" and team("marloo") == "pair" and team("grpo") == "single"
    assert team(f"{plugins}:PairLOO") == "pair" and team(f"{plugins}:SoloLOO") == "single"


def test_a_module_class_algorithm_gets_safe_run_folders_and_its_team_budget(plugins, tmp_path):
    spec = RunSpec(f"{plugins}:SoloLOO", 0)
    assert spec.name == f"{plugins}_SoloLOO-seed0"
    command = train_command(spec, "coop_basics-v0", BUDGET, tmp_path)
    assert command[command.index("--algo") + 1] == f"{plugins}:SoloLOO"  # the trainer resolves the same string
    assert command[command.index("--run-name") + 1] == spec.name
    assert "env_kwargs.team=single" in command and "sampling.max_new_tokens=64" in command
    pair = train_command(RunSpec(f"{plugins}:PairLOO", 0), "coop_basics-v0", BUDGET, tmp_path)
    assert "sampling.max_new_tokens=32" in pair and not any(a.startswith("env_kwargs.team") for a in pair)
    assert label(f"{plugins}:PairLOO") == f"PairLOO ({plugins})" and label("marloo") == "MARLOO" and label("maremax") == "MAReMax"


@pytest.mark.parametrize("algos, message", [
    ("magrpo,no_such_algo", "--algos no_such_algo: No algorithm named 'no_such_algo'"),
    ("magrpo,no_such_package.mod:Algo", "is its package installed, or its folder on PYTHONPATH?"),
    ("bench_plugins_demo:Missing", "--algos bench_plugins_demo:Missing: Cannot load"),
    ("bench_plugins_demo:NoLoss", "NoLoss has no loss() method"),
    ("bench_plugins_demo:", "write a class in your own module as 'package.module:Class'"),
    ("magrpo,grpo,magrpo", "names an algorithm twice"),
])
def test_a_bad_algorithm_is_one_line_and_exit_2_before_anything_runs(algos, message, plugins, tmp_path, capsys, monkeypatch):
    import benchmarks.learning.runner as runner

    monkeypatch.setattr(runner, "run_all", lambda *a, **k: pytest.fail("nothing may train"))
    runs_dir = tmp_path / "runs"
    assert bench_command(["--algos", algos, "--runs-dir", str(runs_dir), "--out", str(tmp_path / "o"), "-q"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not runs_dir.exists()


def test_two_algorithms_that_would_share_run_folders_are_refused(plugins, monkeypatch):
    from trainers.algorithms import registry
    from trainers.algorithms.magrpo import MAGRPO

    monkeypatch.setitem(registry._REGISTERED, f"{plugins}_PairLOO", MAGRPO)
    with pytest.raises(ValueError, match="would share the run folders"):
        check_algorithms([f"{plugins}:PairLOO", f"{plugins}_PairLOO"])


def test_algorithms_added_to_an_existing_benchmark_join_its_runs(plugins, tmp_path):
    """An older runs folder (its bench.json records no teams) gains an algorithm: the finished runs are
    kept, not run again, and the report holds all three with the new one under its label."""
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, BUDGET, seeds=(0,))
    write_run(runs_dir, "magrpo-seed0", {0: NONE, 2: NONE, 4: HALF})
    write_run(runs_dir, "grpo-seed0", {0: NONE, 2: NONE, 4: NONE}, pair=False)
    new = f"{plugins}:SoloLOO"
    write_run(runs_dir, RunSpec(new, 0).name, {0: NONE, 2: NONE, 4: HALF}, pair=False)  # as if trained already
    argv = ["coop_basics-v0", "--algos", f"magrpo,grpo,{new}", "--seeds", "0", *BUDGET_FLAGS,
            "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]
    assert bench_command(argv) == 0
    meta = json.loads((runs_dir / "bench.json").read_text())
    assert meta["algorithms"] == ["magrpo", "grpo", new]
    assert meta["teams"] == {"magrpo": "pair", "grpo": "single", new: "single"}
    assert not (runs_dir / f"{RunSpec(new, 0).name}.run.json").exists()  # finished: not started again
    text = (out / "results.md").read_text()
    assert f"| SoloLOO ({plugins}) after 4 steps | 1 | 50.0 % [" in text
    assert f"| SoloLOO ({plugins}) | single | 64 |" in text
    assert f"--algos magrpo,grpo,{new} --seeds 0" in text


def test_the_plan_of_a_mixed_list_is_seed_major(plugins):
    names = [spec.name for spec in plan(["magrpo", f"{plugins}:PairLOO"], [0, 1])]
    assert names == ["magrpo-seed0", f"{plugins}_PairLOO-seed0", "magrpo-seed1", f"{plugins}_PairLOO-seed1"]
