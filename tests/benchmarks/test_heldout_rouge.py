"""Held-out ROUGE-L beside the reward, from a TL;DR bench's records."""

import json

import pytest

from benchmarks.writing import heldout_rouge


def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def bench_folder(tmp_path, data_dir):
    refs = heldout_rouge.references("tldr-v3")
    ids = sorted(refs)[:6]
    untrained = [{"task_id": i, "reward": 0.0, "replies": [{"tldr": "nothing to do with it", "detail": "x"}]} for i in ids]
    # After training the TL;DR is the author's own on half the posts: ROUGE-L rises there to 1.
    after = [{"task_id": i, "reward": 1.0, "replies": [{"tldr": refs[i] if k % 2 else "nothing", "detail": "x"}]}
             for k, i in enumerate(ids)]
    records = tmp_path / "records"
    _write(records / "untrained-pair.jsonl", untrained)
    _write(records / "magrpo-seed0" / "step_00004.jsonl", after)
    (records / "bench.json").write_text(json.dumps({"env": "tldr-v3"}))
    (records / "runs.json").write_text(json.dumps([
        {"name": "magrpo-seed0", "algo": "magrpo", "status": "done",
         "evals": {"0": "untrained-pair.jsonl", "4": "magrpo-seed0/step_00004.jsonl"}},
        {"name": "magrpo-seed1", "algo": "magrpo", "status": "failed", "evals": {}},
    ]))
    return tmp_path, untrained, after, refs


def test_rouge_l_is_of_the_last_reply_against_the_authors_tldr(bench_folder):
    _, untrained, after, refs = bench_folder
    scores = heldout_rouge.rouge_l(after, refs, "tldr")
    assert [scores[r["task_id"]] for r in after] == pytest.approx([0.0, 1.0] * 3, abs=1e-9)
    no_reply = [{"task_id": after[0]["task_id"], "replies": []}]
    assert heldout_rouge.rouge_l(no_reply, refs, "tldr") == {after[0]["task_id"]: 0.0}


def test_the_table_pairs_after_with_untrained_and_skips_unfinished_runs(bench_folder):
    folder, *_ = bench_folder
    assert heldout_rouge.main([str(folder)]) == 0
    text = (folder / "rouge.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| magrpo"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "1"  # the failed seed is not counted
    assert float(cells[3]) > float(cells[2]) and cells[4].startswith("+")
    assert cells[5:7] == ["0.00", "1.00"]
