"""The protocol is written once: the committed leaderboard (the procedural suite's planned result) keeps
the protocol it ran under beside its records, and ``benchmarks/learning/protocol.json`` is that protocol on
the suite's newest version; ``llm-coop bench`` takes its defaults from it, ``--help`` shows them, the plan
says its estimated time before anything trains, and ``--quick`` is a few-minute smoke run labelled "not
comparable"."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from benchmarks.learning.cli import _parser, _start, apply_quick, bench_command, estimate_run_s, plan_summary
from benchmarks.learning.plan import Budget
from benchmarks.learning.protocol import load_protocol

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD_FOLDER = ROOT / "benchmarks" / "results" / "learning" / "coop_procedural-v0"
LEADERBOARD = LEADERBOARD_FOLDER / "results.json"


def _setting(overrides, key):
    (value,) = [item.partition("=")[2] for item in overrides if item.partition("=")[0] == key]
    return yaml.safe_load(value)


def test_the_leaderboard_keeps_the_protocol_it_ran_under():
    protocol = load_protocol(LEADERBOARD_FOLDER / "protocol.json")
    committed = json.loads(LEADERBOARD.read_text(encoding="utf-8"))
    assert protocol.env == committed["env"] and protocol.budget == Budget.from_dict(committed["budget"])
    assert list(protocol.seeds) == committed["seeds"] and set(protocol.algorithms) <= set(committed["algorithms"])
    assert protocol.env_kwargs == {"level": _setting(committed["overrides"], "env_kwargs.level")}
    assert protocol.held_out == _setting(committed["overrides"], "eval_env_kwargs")
    assert protocol.eval_sets == committed["eval_sets"]
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert f"`{protocol.name}`" in page and "benchmarks/results/learning/coop_procedural-v0/protocol.json" in page


def test_new_benches_run_the_newest_version_of_the_leaderboards_env():
    import llm_coop_envs

    leaderboard, default = load_protocol(LEADERBOARD_FOLDER / "protocol.json"), load_protocol()
    name = leaderboard.env.rsplit("-v", 1)[0]
    versions = [env_id for env_id in llm_coop_envs.registered_ids() if env_id.rsplit("-v", 1)[0] == name]
    assert default.env == max(versions, key=lambda env_id: int(env_id.rsplit("-v", 1)[1])) != leaderboard.env
    assert default.name != leaderboard.name  # a result names its protocol: two envs, two names


def test_help_shows_the_protocols_defaults(capsys):
    with pytest.raises(SystemExit):
        bench_command(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    protocol = load_protocol()
    for shown in (f"(default: {protocol.env})", "(default: magrpo,grpo)", "(default: [0, 1, 2])",
                  f"(default: {protocol.budget.steps})", f"(default: {protocol.budget.eval_problems})",
                  f"(default: {protocol.budget.learning_rate})", "protocol.json", "--quick"):
        assert shown in text, shown


def _meta(tmp_path, *argv):
    parser = _parser()
    args = parser.parse_args(["--runs-dir", str(tmp_path / "runs"), *argv])
    if args.quick:
        apply_quick(args, parser)
    return _start(args, list(argv), tmp_path / "runs")


def test_no_arguments_run_the_protocol(tmp_path):
    protocol, meta = load_protocol(), _meta(tmp_path)
    assert meta["env"] == protocol.env and meta["seeds"] == list(protocol.seeds)
    assert meta["algorithms"] == list(protocol.algorithms) and meta["budget"] == dataclasses.asdict(protocol.budget)
    assert _setting(meta["overrides"], "env_kwargs.level") == 1
    assert _setting(meta["overrides"], "eval_env_kwargs") == dict(protocol.held_out)
    assert _setting(meta["overrides"], "max_grad_norm") == protocol.max_grad_norm
    assert meta["eval_sets"] == protocol.eval_sets and meta["protocol"]["comparable"] is True
    text = plan_summary(meta, tmp_path / "runs", tmp_path / "runs" / "results")
    assert "Estimated time: about" in text and "NOT COMPARABLE" not in text
    user = _meta(tmp_path / "mine", "--set", "env_kwargs.level=2")  # a key the user sets is the user's
    assert _setting(user["overrides"], "env_kwargs.level") == 2


def test_quick_is_a_few_minute_smoke_run_labelled_not_comparable(tmp_path):
    meta = _meta(tmp_path, "--quick")
    budget = Budget.from_dict(meta["budget"])
    assert meta["seeds"] == [0] and meta["algorithms"] == ["magrpo"] and not meta["eval_sets"]
    assert estimate_run_s(budget) < 5 * 60
    assert meta["protocol"] == {"name": load_protocol().name, "comparable": False,
                                "label": "quick smoke run: not comparable with the leaderboard"}
    text = plan_summary(meta, tmp_path / "runs", tmp_path / "runs" / "results")
    assert text.startswith("QUICK SMOKE RUN: NOT COMPARABLE WITH THE LEADERBOARD.") and "Estimated time: about" in text
    assert _meta(tmp_path / "b", "--quick", "--steps", "3")["budget"]["steps"] == 3  # a value given wins
