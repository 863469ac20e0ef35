"""The agreement benchmark's statistics and its pipeline on pairs built from the data (no model)."""

import json

import pytest

from benchmarks.metrics.writing import ranks, spearman
from benchmarks.writing.reward_agreement import main
from benchmarks.writing.probe_cases import PROBES


def test_ranks_average_ties():
    assert ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]


def test_spearman_known_values():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    with pytest.raises(ValueError):
        spearman([1], [1])


def test_built_pairs_report_and_saved_file(data_dir, tmp_path, capsys):
    saved = tmp_path / "pairs.jsonl"
    main(["--pairs", "built", "--save", str(saved)])
    report = capsys.readouterr().out
    assert f"{10 * (len(PROBES) + 4)} pairs on tldr-v1 (built)" in report
    assert "| reward without its rouge component vs ROUGE-L |" in report
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    assert {row["label"] for row in rows} >= {"genuine", "probe: generic template pair"}
    genuine = [r["reward"] for r in rows if r["label"] == "genuine"]
    template = [r["reward"] for r in rows if r["label"] == "probe: generic template pair"]
    assert min(genuine) > max(template)
    # the saved file is a valid input: the same pairs give the same numbers
    main(["--pairs", str(saved)])
    again = capsys.readouterr().out
    assert report.split("\n", 1)[1] == again.split("\n", 1)[1]


@pytest.mark.slow
def test_sampled_pairs_from_a_tiny_local_model(data_dir, tmp_path, capsys):
    pytest.importorskip("torch")
    from tests.trainers.conftest import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    folder = tmp_path / "tiny-model"
    build_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    saved = tmp_path / "sampled.jsonl"
    main(["--pairs", "model", "--model", str(folder), "--posts", "2", "--samples", "2", "--max-new-tokens", "8", "--save", str(saved)])
    assert "4 pairs on tldr-v1 (model)" in capsys.readouterr().out
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [r["label"].endswith(("sample 0", "sample 1")) for r in rows] == [True] * 4
    assert len({r["task_id"] for r in rows}) == 2


def test_grader_against_the_rest_with_a_local_stand_in(data_dir, capsys):
    from tests.multiturn.reviewer_server import completion, reviewer_server

    def grade_by_connectives(request, stop):
        text = request["messages"][-1]["content"]
        grade = 5 if "However" in text else 2
        return completion(json.dumps({"structure": grade, "style": grade, "coherence": 3}))(request, stop)

    with reviewer_server(grade_by_connectives) as server:
        main(["--pairs", "built", "--grader-url", server.url, "--grader-model", "stand-in"])
    report = capsys.readouterr().out
    assert "| grader vs the rest of the reward (" in report and "| grader vs ROUGE-L |" in report
