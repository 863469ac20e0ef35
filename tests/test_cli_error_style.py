"""One error style for every command: each kind of user error (a bad value, a name that does not load,
a damaged checkpoint, missing data) ends, through ``llm-coop``'s own entry point, in exactly one line on
stderr that names the offending value and its fix, exit code 2, no traceback, before any model loads.

Kinds a command has no input for are left out: ``eval`` loads no algorithm (its unknown-name case is
an unknown method) and ``bench`` resumes no checkpoint of the user's."""

from __future__ import annotations

import json

import pytest

from llm_coop_envs.cli import main

MISSING_MODULE = "no_such_pkg.algo:MyAlgo"


def _damaged_run(folder):
    """A run folder with results whose latest checkpoint's ``state.json`` was cut short."""
    checkpoint = folder / "checkpoints" / "step-00000002"
    (checkpoint / "weights").mkdir(parents=True)
    (checkpoint / "state.json").write_text('{"step": 2, "keys": ["hel', encoding="utf-8")
    (folder / "metrics.jsonl").write_text('{"train/step": 2}\n', encoding="utf-8")
    return checkpoint


def _train(tmp_path, *extra):
    return ["train", "--env", "coop_basics-v1", "--run-dir", str(tmp_path / "runs"), *extra]


def _eval(tmp_path, *extra):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"helper": "x", "main": "y"}), encoding="utf-8")
    return ["eval", "--scripted", str(script), "-q", "--out", str(tmp_path / "out"), *extra]


def _bench(tmp_path, *extra):
    return ["bench", "--runs-dir", str(tmp_path / "bench"), "-q", *extra]


# (command, error kind) -> (argv from tmp_path, fragments the line must hold: the value, then the fix)
CASES = {
    ("train", "bad value"): (lambda t: _train(t, "learning_rate=-1"), ["learning_rate", "-1", "> 0", "learning_rate=1e-4"]),
    ("train", "zero learning rate"): (lambda t: _train(t, "learning_rate=0"), ["learning_rate", "got 0", "learning_rate=1e-4"]),
    ("train", "missing module"): (lambda t: _train(t, "--algo", MISSING_MODULE), [MISSING_MODULE, "PYTHONPATH"]),
    ("train", "damaged checkpoint"): (
        lambda t: _train(t, "--run-name", "X", "--resume") if _damaged_run(t / "runs" / "X") else None,
        ["step-00000002", "state.json", "delete that folder", "--resume --overwrite"]),
    ("train", "missing data"): (lambda t: ["train", "--env", "coop_humaneval-v1", "--run-dir", str(t / "runs")],
                                ["'coop_humaneval'", "LLM_COOP_DATA_DIR", "data_path="]),
    ("eval", "bad value"): (lambda t: ["coop_basics-v1", "-n", "0"], ["n (samples per problem)", "got 0", ">= 1"]),
    ("eval", "unknown name"): (lambda t: ["coop_basics-v1", "--methods", "solo"], ["'solo'", "choose from"]),
    ("eval", "damaged checkpoint"): (
        lambda t: ["coop_basics-v1", "--methods", "", "--checkpoint", f"x={_damaged_run(t / 'runs' / 'X')}"],
        ["step-00000002", "state.json", "delete that folder"]),
    ("eval", "missing data"): (lambda t: ["coop_humaneval-v1"], ["'coop_humaneval'", "LLM_COOP_DATA_DIR", "data_path="]),
    ("bench", "bad value"): (lambda t: _bench(t, "coop_basics-v1", "--steps", "0"), ["--steps", "got 0", "at least 1"]),
    ("bench", "zero learning rate"): (lambda t: _bench(t, "coop_basics-v1", "--learning-rate", "0"),
                                      ["--learning-rate", "got 0.0", "--learning-rate 2e-4"]),
    ("bench", "missing module"): (lambda t: _bench(t, "coop_basics-v1", "--algos", f"magrpo,{MISSING_MODULE}"),
                                  [MISSING_MODULE, "PYTHONPATH"]),
    ("bench", "missing data"): (lambda t: _bench(t, "coop_humaneval-v1"), ["'coop_humaneval'", "LLM_COOP_DATA_DIR"]),
}


@pytest.mark.parametrize(("command", "kind"), sorted(CASES), ids=[f"{c}-{k}".replace(" ", "_") for c, k in sorted(CASES)])
def test_every_user_error_is_one_line_with_its_fix(command, kind, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no Hub: a missing dataset stays missing
    monkeypatch.delenv("LLM_COOP_DATA_DIR", raising=False)
    make_argv, fragments = CASES[command, kind]
    argv = make_argv(tmp_path)
    argv = argv if argv[0] == command else (_eval(tmp_path, *argv) if command == "eval" else argv)
    try:
        code = main(argv)
    except SystemExit as end:  # argparse's own refusals end this way
        code = end.code
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err and "Training" not in captured.out  # refused before any model loads
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"llm-coop {command}: "), captured.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert not (tmp_path / "bench" / "bench.json").exists()
