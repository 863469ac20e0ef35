"""The before/after table: paired intervals over the same problems, and a plain word on noise."""

from __future__ import annotations

import json

from trainers.before_after import before_after_report, eval_records, paired_change


def _records(solved, calls):
    return [{"task_id": f"t/{i}", "solved": s, "tests_passed": 1.0 if s else 0.2, "calls_helper": c,
             "reward": 4.0 if s else 1.3} for i, (s, c) in enumerate(zip(solved, calls))]


def test_no_change_is_reported_as_within_noise():
    same = _records([True, False] * 20, [False] * 40)
    report = before_after_report(same, same)
    assert "| pass rate | 20/40 (50%) | 20/40 (50%) | +0.0 pts [+0.0, +0.0] |" in report
    assert "Every change is within noise" in report


def test_a_large_paired_gain_is_outside_noise_and_one_problem_is_not():
    before = _records([False] * 40, [False] * 40)
    assert "Outside noise" in before_after_report(before, _records([True] * 30 + [False] * 10, [True] * 40))
    assert "within noise" in before_after_report(before, _records([True] + [False] * 39, [False] * 40))


def test_the_interval_pairs_problems():
    """Each problem moves by +1 exactly: the paired interval has no width at all."""
    change, low, high = paired_change([0, 1, 0, 1], [1, 2, 1, 2])
    assert (change, low, high) == (1.0, 1.0, 1.0)


def test_records_are_read_from_the_first_and_last_evaluation(tmp_path):
    folder = tmp_path / "eval"
    folder.mkdir()
    for step, solved in ((0, False), (5, False), (10, True)):
        (folder / f"step_{step:05d}.jsonl").write_text(json.dumps(_records([solved], [solved])[0]) + "\n")
    before, after = eval_records(tmp_path)
    assert before[0]["solved"] is False and after[0]["solved"] is True
    assert eval_records(tmp_path / "nothing") is None
