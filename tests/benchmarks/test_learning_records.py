"""The per-problem records written with every results table, and the one command that recomputes the
table from them; reward changes split by component; results name no machine's paths."""

import json

from benchmarks.learning.cli import bench_command
from benchmarks.learning.plan import Budget, plan
from benchmarks.learning.recompute import main as recompute_main
from benchmarks.learning.recompute import relative
from tests.benchmarks.learning_runs import write_meta, write_run

BUDGET = Budget(steps=4, eval_every=4, eval_problems=6)


def _bench(tmp_path, components=True):
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, BUDGET, algorithms=("magrpo",), seeds=(0, 1))
    for spec in plan(["magrpo"], [0, 1]):
        run_dir = write_run(runs_dir, spec.name, {0: [False] * 6, 4: [True, False] * 3})
        if components:  # the bench's records carry the reward's components
            for path in (run_dir / "eval").glob("*.jsonl"):
                rows = [json.loads(line) for line in path.read_text().splitlines()]
                for row in rows:
                    row["components"] = {"syntax": 1.0, "tests": 2.0 * row["solved"]}
                path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "300", "-q"]) == 0
    return out


def test_the_table_recomputes_from_the_records_alone(tmp_path, capsys):
    out = _bench(tmp_path)
    assert {p.name for p in (out / "records").iterdir()} >= {"bench.json", "runs.json", "magrpo-seed0", "magrpo-seed1"}
    written = (out / "results.json").read_text(), (out / "results.md").read_text()
    (out / "results.json").unlink()
    assert recompute_main([str(out)]) == 0
    assert ((out / "results.json").read_text(), (out / "results.md").read_text()) == written
    assert "held-out pass rate" in capsys.readouterr().out


def test_reward_changes_are_split_by_component(tmp_path):
    out = _bench(tmp_path)
    components = json.loads((out / "results.json").read_text())["algorithms"]["magrpo"]["components"]
    assert components["syntax"] == {"mean": 0.0, "low": 0.0, "high": 0.0}
    assert components["tests"]["mean"] == 1.0  # half the problems gained 2.0
    assert "`syntax` | `tests`" in (out / "results.md").read_text()


def test_a_table_without_records_cannot_be_recomputed(tmp_path, capsys):
    assert recompute_main([str(tmp_path)]) == 2
    assert "cannot be recomputed" in capsys.readouterr().err


def test_results_name_paths_relative_to_the_project_root(tmp_path, monkeypatch):
    import sys

    monkeypatch.chdir(tmp_path)
    value = {"command": f"{sys.executable} -m trainers train --run-dir {tmp_path}/runs", "n": 3}
    assert relative(value) == {"command": "python -m trainers train --run-dir runs", "n": 3}
