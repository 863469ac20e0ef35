"""The planned minimum detectable change, from untrained records."""

import json
import math

import numpy as np
import pytest

from benchmarks.learning import mdc


def _records(solved, problems=360):
    return [{"task_id": f"t{i}", "solved": i < solved, "tests_passed": 1.0 if i < solved else (i % 4) / 4}
            for i in range(problems)]


def test_no_churn_means_no_spread_and_a_zero_mdc():
    (row,) = mdc.mdc_table(_records(90), seeds=3, metrics=("pass_rate",), churns=(0.0,))[:1]
    assert row["untrained"] == 0.25 and row["se"] == 0.0 and row["mdc"] == 0.0


def test_the_null_experiment_has_no_expected_gain():
    untrained = mdc.untrained_values(_records(90), "pass_rate")
    rng = np.random.default_rng(1)
    gains = [mdc.null_trained(untrained, 3, 0.3, False, rng).mean() - untrained.mean() for _ in range(300)]
    assert abs(np.mean(gains)) < 0.003


def test_the_se_is_near_the_normal_approximation_and_grows_with_churn():
    untrained = mdc.untrained_values(_records(90), "pass_rate")
    independent = mdc.standard_error(untrained, 3, 0.3, shared=False)
    # each churned cell differs from the untrained with variance 2p(1-p) over n x S cells; resampling
    # three seeds with replacement (the report's hierarchical bootstrap) adds about as much again
    expected = math.sqrt(0.3 * 2 * 0.25 * 0.75 / (360 * 3))
    assert expected < independent < expected * 2
    assert expected < mdc.standard_error(untrained, 3, 0.3, shared=True) < expected * 2
    assert mdc.standard_error(untrained, 3, 0.1, shared=False) < independent


def test_more_problems_detect_smaller_changes():
    small = mdc.mdc_table(_records(30, 120), 3, ("pass_rate",), (0.3,))[0]["mdc"]
    large = mdc.mdc_table(_records(90, 360), 3, ("pass_rate",), (0.3,))[0]["mdc"]
    assert large < small


def test_records_without_the_metric_are_refused():
    with pytest.raises(ValueError, match="tests_passed"):
        mdc.untrained_values([{"solved": True}], "acc")


def test_the_command_prints_the_table(tmp_path, capsys):
    path = tmp_path / "untrained.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(90)))
    assert mdc.main([str(path), "--seeds", "3", "--churn", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "| pass_rate | 360 | 3 | 25.0 % | 20% | independent |" in out and "| acc | 360 | 3 |" in out
