"""Every ``llm-coop`` command reports a bad input the same way: one line on stderr, exit code 2, a
suggestion where one exists, before any model loads. ``llm-coop eval`` here (``train`` and ``bench``
have their own tests); ``make`` suggests the nearest argument as it suggests the nearest id."""

from __future__ import annotations

import json

import pytest

import llm_coop_envs
from benchmarks.cli import eval_command

SCRIPT = {"helper": "def aux(score):\n    return score + 10", "main": "def add_bonus_points(s):\n    return s"}


@pytest.fixture()
def script(tmp_path):
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return path


def one_line_error(capsys, argv, *fragments):
    try:
        code = eval_command(argv)
    except SystemExit as end:  # a bad flag ends in argparse, as in every command
        code = end.code
    assert code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("llm-coop eval: "), captured.err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_make_suggests_the_nearest_argument():
    with pytest.raises(TypeError, match=r"coop_basics-v1 takes no argument 'num_turn' \(did you mean 'num_turns'\?\)"):
        llm_coop_envs.make("coop_basics-v1", num_turn=2)
    with pytest.raises(TypeError, match=r"'splt' \(did you mean 'split'\?\)"):
        llm_coop_envs.make("humaneval-v1", splt="test")
    with pytest.raises(TypeError, match="takes no argument 'zzz'; its env page lists"):
        llm_coop_envs.make("coop_basics-v1", zzz=1)


def test_eval_refuses_bad_input_in_one_line(tmp_path, script, capsys):
    common = ["--scripted", str(script), "--methods", "env", "-n", "1", "--out", str(tmp_path / "out"), "-q"]
    one_line_error(capsys, ["coop_basics-v2", *common, "--task-ids", "nope"], "Unknown task ids ['nope']")
    one_line_error(capsys, ["coop_basics-v2", *common, "--env-kwargs", '{"num_turn": 2}'], "did you mean 'num_turns'?")
    one_line_error(capsys, ["coop_basics-v9", *common], "Did you mean 'coop_basics-v0', 'coop_basics-v1', 'coop_basics-v2'?")
    one_line_error(capsys, ["coop_basics-v2", *common, "-n", "0"], "must be >= 1")
    one_line_error(capsys, ["coop_basics-v2", *common, "--temperature", "-1"], "temperature must be >= 0")
    one_line_error(capsys, ["coop_basics-v2", *common, "--env-kwargs", "[1]"], "--env-kwargs must be a JSON object")
    one_line_error(capsys, ["coop_basics-v2", *common, "--bogus"], "unrecognized arguments: --bogus")
    one_line_error(capsys, ["coop_basics-v1", "--methods", "", "--checkpoint", f"x={tmp_path / 'gone'}", "-q"],
                   "--checkpoint x:", "does not exist")


def test_eval_refuses_a_bad_or_missing_replies_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("not json", encoding="utf-8")
    common = ["coop_basics-v1", "--methods", "env", "-n", "1", "-q"]
    one_line_error(capsys, [*common, "--scripted", str(bad)], "is not a JSON file")
    one_line_error(capsys, [*common, "--scripted", str(tmp_path / "none.json")], "does not exist")
    bad.write_text("[1, 2]", encoding="utf-8")
    one_line_error(capsys, [*common, "--scripted", str(bad)], "JSON object of agent to reply text")


def test_eval_names_a_missing_dataset_and_an_unreachable_model_in_one_line(script, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a machine without the Hub
    one_line_error(capsys, ["coop_basics-v1", "--methods", "env", "-n", "1", "-q", "--model", "no-org/no-model"],
                   "'no-org/no-model' is not in the Hugging Face cache", "--model default")
    monkeypatch.delenv("LLM_COOP_DATA_DIR", raising=False)  # and no data folder
    one_line_error(capsys, ["coop_humaneval-v1", "--scripted", str(script), "--methods", "env", "-n", "1", "-q"],
                   "No data for 'coop_humaneval'", "LLM_COOP_DATA_DIR")


def test_eval_with_one_sample_reports_pass_at_1_only(tmp_path, script, capsys):
    out = tmp_path / "out"
    argv = ["coop_basics-v1", "--scripted", str(script), "--methods", "env", "-n", "1", "--problems", "2", "--out", str(out), "-q"]
    assert eval_command(argv) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["ks"] == [1]
