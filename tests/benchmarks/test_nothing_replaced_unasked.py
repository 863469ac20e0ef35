"""Nothing a user made is replaced without being asked: ``llm-coop eval`` refuses an ``--out`` that
holds an evaluation unless ``--overwrite`` (and without ``--out`` writes a fresh folder), and ``llm-coop
bench`` writes ``bench.json`` only once its set-up succeeds, so a bad ``--model`` or an env without data
leaves nothing that blocks the corrected command; a ``bench.json`` of a bench that never produced a
record does not block other settings either."""

from __future__ import annotations

import dataclasses
import json

import pytest

from benchmarks.cli import eval_command
from benchmarks.learning.cli import _check_resumable, bench_command
from benchmarks.learning.plan import Budget
from tests.benchmarks.learning_runs import write_meta, write_run

from tests.test_cli_one_line_errors import script  # noqa: F401  (the fixture: a scripted pair of replies)


def _one_line(capsys, command, argv, prefix):
    assert command(argv) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert line.startswith(prefix) and "Traceback" not in err
    return line


def test_eval_refuses_an_out_that_holds_an_evaluation(tmp_path, script, capsys, monkeypatch):  # noqa: F811  (the fixture)
    out = tmp_path / "out"
    argv = ["coop_basics-v1", "--scripted", str(script), "--methods", "env", "-n", "1", "--problems", "2", "--out", str(out), "-q"]
    assert eval_command(argv) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    line = _one_line(capsys, eval_command, argv, "llm-coop eval: ")
    assert f"--out {out} already holds an evaluation" in line and "--overwrite" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert eval_command([*argv, "--overwrite"]) == 0
    monkeypatch.chdir(tmp_path)  # without --out: a fresh folder under runs/eval each time
    assert eval_command(argv[:-3] + ["-q"]) == 0
    (fresh,) = (tmp_path / "runs" / "eval").iterdir()
    assert (fresh / "results.json").is_file()


def test_bench_with_a_bad_model_or_an_env_without_data_writes_no_bench_json(tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    line = _one_line(capsys, bench_command, ["coop_basics-v1", "--runs-dir", str(runs), "--model", "no-org/no-model", "-q"],
                     "llm-coop bench: ")
    assert "no-org/no-model" in line and "--model default" in line
    monkeypatch.delenv("LLM_COOP_DATA_DIR", raising=False)
    line = _one_line(capsys, bench_command, ["coop_humaneval-v1", "--runs-dir", str(runs), "-q"], "llm-coop bench: ")
    assert "No data for 'coop_humaneval'" in line and "LLM_COOP_DATA_DIR" in line
    assert not (runs / "bench.json").exists()


def test_a_bench_json_without_records_does_not_block_other_settings(tmp_path):
    runs = tmp_path / "runs"
    write_meta(runs, Budget(steps=4, eval_every=2, model="no-org/no-model"))
    meta = json.loads((runs / "bench.json").read_text(encoding="utf-8"))
    corrected = {**meta, "budget": dataclasses.asdict(Budget(steps=4, eval_every=2)), "eval_sets": {}}
    _check_resumable(corrected, runs)  # nothing ran under the old settings: nothing to keep
    write_run(runs, "magrpo-seed0", {0: [False] * 6, 2: [True] * 6})
    with pytest.raises(ValueError, match="other settings"):
        _check_resumable(corrected, runs)
