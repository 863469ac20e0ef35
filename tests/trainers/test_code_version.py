"""Every run records its code: the project's source hash (results folders left out, so a commit that only
adds results changes nothing), the git commit and whether the source was dirty, and a plug-in
algorithm's module hash; ``llm-coop bench`` refuses to mix runs of other code into a runs folder unless
``--reuse``, and says which code changed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from benchmarks.learning.cli import _check_resumable, _parser, _save_meta, _start
from tests.benchmarks.learning_runs import write_run
from trainers.code_version import (
    PACKAGES, PROJECT_ROOT, changed_code, code_record, git_state, module_record, source_hash,
)
from trainers.config import load_config
from trainers.provenance import config_provenance

PLUGIN = '''
from trainers.algorithms import AlgorithmBase, leave_one_out, policy_gradient_loss


class MyAlgo(AlgorithmBase):
    def advantages(self, group):
        return leave_one_out(group.returns)

    def loss(self, batch):
        return policy_gradient_loss(batch)
'''


@pytest.fixture()
def project(tmp_path):
    """A copy of the three packages' source in a fresh git checkout."""
    root = tmp_path / "project"
    for package in PACKAGES:
        shutil.copytree(PROJECT_ROOT / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__", "results", "*.json", "*.gz"))
    (root / "benchmarks" / "results").mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "source")
    return root, git


@pytest.fixture()
def plugin(tmp_path, monkeypatch):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "my_bench_algo.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "my_bench_algo", raising=False)  # not another test's copy
    yield folder / "my_bench_algo.py"
    sys.modules.pop("my_bench_algo", None)


def test_results_change_nothing_and_an_edit_changes_the_source_hash(project):
    root, git = project
    before = source_hash(root)
    assert git_state(root)["dirty"] is False
    (root / "benchmarks" / "results" / "table.md").write_text("| a |", encoding="utf-8")
    (root / "benchmarks" / "results" / "recompute.py").write_text("x = 1", encoding="utf-8")
    assert source_hash(root) == before and git_state(root)["dirty"] is False
    commit = git_state(root)["commit"]
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "results only")
    assert source_hash(root) == before and git_state(root)["commit"] != commit  # a new commit, the same code
    module = root / "trainers" / "rollout.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# one more line\n", encoding="utf-8")
    assert source_hash(root) != before and git_state(root)["dirty"] is True
    (root / "trainers" / "new_module.py").write_text("", encoding="utf-8")  # an untracked module counts too
    module.write_text(module.read_text(encoding="utf-8").replace("\n# one more line\n", ""), encoding="utf-8")
    assert source_hash(root) != before and git_state(root)["dirty"] is True


def test_an_installed_copy_has_no_git_state(tmp_path):
    assert git_state(tmp_path) is None


def test_a_plugin_is_hashed_by_its_module_file_and_bundled_ones_are_not(plugin):
    record = code_record("my_bench_algo:MyAlgo")
    assert record["plugin"]["module"] == "my_bench_algo" and record["plugin"]["file"] == "my_bench_algo.py"
    assert code_record("magrpo")["plugin"] is None  # the source hash covers it
    assert len(record["source_sha256"]) == 64
    first = record["plugin"]["sha256"]
    plugin.write_text(PLUGIN.replace("leave_one_out(group.returns)", "group.returns"), encoding="utf-8")
    import my_bench_algo

    assert module_record(my_bench_algo.MyAlgo)["sha256"] != first


def test_the_run_records_carry_the_code(plugin):
    record = config_provenance(load_config(algo="my_bench_algo:MyAlgo"))
    assert record["code"]["source_sha256"] == source_hash()
    assert record["code"]["plugin"]["module"] == "my_bench_algo"
    if (PROJECT_ROOT / ".git").exists():
        assert set(record["code"]["git"]) == {"commit", "dirty"}


def test_bench_refuses_runs_of_other_code_unless_reuse(tmp_path, plugin):
    runs = tmp_path / "runs"
    argv = ["coop_basics-v1", "--algos", "magrpo,my_bench_algo:MyAlgo", "--runs-dir", str(runs), "--steps", "4",
            "--eval-every", "2", "--eval-problems", "6", "--sample-tokens", "64", "-q"]
    meta = _start(_parser().parse_args(argv), argv, runs)
    _save_meta(meta, runs)
    write_run(runs, "magrpo-seed0", {0: [False] * 6, 2: [True] * 6})
    _start(_parser().parse_args(argv), argv, runs)  # the same code: the runs are kept
    plugin.write_text(PLUGIN + "\n# edited\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"the plug-in my_bench_algo:MyAlgo changed since.*--runs-dir.*--reuse"):
        _start(_parser().parse_args(argv), argv, runs)
    again = _start(_parser().parse_args([*argv, "--reuse"]), argv, runs)
    assert again["sessions"][-1]["code"]["plugins"]["my_bench_algo:MyAlgo"]["sha256"] != \
        meta["code"]["plugins"]["my_bench_algo:MyAlgo"]["sha256"]
    edited_source = {**meta["code"], "source_sha256": "0" * 64}
    with pytest.raises(ValueError, match="the project's Python source changed"):
        _check_resumable({**meta, "code": edited_source}, runs)


def test_changed_code_names_each_change_and_an_unrecorded_bench_none():
    old = {"source_sha256": "a", "plugins": {"x:X": {"sha256": "1"}, "magrpo": None}}
    assert changed_code(old, old) == []
    assert changed_code(None, old) == []
    new = {"source_sha256": "b", "plugins": {"x:X": {"sha256": "2"}, "magrpo": None, "y:Y": {"sha256": "3"}}}
    assert changed_code(old, new) == ["the project's Python source", "the plug-in x:X"]


PLUGIN = textwrap.dedent(PLUGIN)


def test_the_bench_command_names_the_changed_plugin_in_one_line_and_reuse_goes_ahead(tmp_path, plugin, capsys):
    """Through ``llm-coop bench`` itself: with a finished run in the folder, an edited plug-in stops the
    command before anything trains (one line on stderr, exit 2, naming --runs-dir and --reuse); with
    ``--reuse`` it plans the runs."""
    from benchmarks.learning.cli import bench_command

    runs = tmp_path / "runs"
    argv = ["coop_basics-v2", "--algos", "magrpo,my_bench_algo:MyAlgo", "--runs-dir", str(runs), "--steps", "4",
            "--eval-every", "2", "--eval-problems", "6", "--sample-tokens", "64", "--seeds", "0", "-q"]
    _save_meta(_start(_parser().parse_args(argv), argv, runs), runs)  # an earlier bench of this folder,
    write_run(runs, "magrpo-seed0", {0: [False] * 6, 2: [True] * 6})  # with a finished run
    plugin.write_text(PLUGIN + "\n# edited\n", encoding="utf-8")
    assert bench_command([*argv, "--untrained-only", "--timeout-min", "0.01"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert "my_bench_algo:MyAlgo changed since" in err[0] and "--runs-dir" in err[0] and "--reuse" in err[0]
    assert _start(_parser().parse_args([*argv, "--reuse"]), argv, runs)["sessions"]  # --reuse plans it
