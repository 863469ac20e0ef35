"""``llm-coop eval`` tables carry 95 % intervals over problems for the solved rate and the reward (in
``results.md`` and ``results.json``), so two rows are not read as different by noise."""

from __future__ import annotations

import json

from benchmarks.cli import eval_command

# solves the first problem of coop_basics-v1's train split, none of the others
SCRIPT = {"helper": "def aux(score):\n    return score + 10",
          "main": "def add_bonus_points(scores):\n    return [aux(s) for s in scores]"}


def test_eval_tables_carry_intervals(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["coop_basics-v1", "--split", "train", "--scripted", str(script), "--methods", "env", "-n", "1",
            "--problems", "6", "--out", str(out), "-q"]
    assert eval_command(argv) == 0
    summary = json.loads((out / "results.json").read_text(encoding="utf-8"))["methods"]["env"]
    solved = summary["intervals"]["solved_rate"]
    assert solved["mean"] == summary["solved_rate"] == 1 / 6
    assert solved["low"] == 0.0 < solved["mean"] < solved["high"] <= 0.5
    assert summary["intervals"]["reward"]["low"] < summary["reward"] < summary["intervals"]["reward"]["high"]
    table = (out / "results.md").read_text(encoding="utf-8")
    assert "| solved [95 % CI] | reward [95 % CI] |" in table
    assert f"| 16.67% [0.0, {100 * solved['high']:.1f}] |" in table
