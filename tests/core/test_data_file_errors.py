"""A user's data file is read strictly: a JSON Lines error names the file's line (not only the column
inside it), two problems under one ``task_id`` are refused, and ``reset(options={"index": -1})`` is out
of range like any other index instead of opening the last problem."""

from __future__ import annotations

import json
import warnings

import pytest

import llm_coop_envs
from llm_coop_envs.data import load_rows


def test_a_json_lines_error_names_the_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a"}\n\n{"task_id": "b"}\n{"task_id": "c", oops}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"rows.jsonl is not valid JSON Lines: line 4, column 18: Expecting property name"):
        load_rows("tldr", data_path=path)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_duplicate_task_ids_are_refused(tmp_path, suffix):
    rows = [{"task_id": "mine/0", "prompt": "def f():\n", "test": "", "entry_point": "f"}] * 2
    path = tmp_path / f"mine{suffix}"
    path.write_text(json.dumps(rows) if suffix == ".json" else "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=r"task_id 'mine/0' appears twice \(problems 1 and 2\)"):
        load_rows("coop_humaneval", data_path=path)
    with pytest.raises(ValueError, match="appears twice"):
        llm_coop_envs.make("coop_humaneval-v1", data_path=str(path))


def test_reset_index_minus_one_is_out_of_range():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = llm_coop_envs.make("coop_basics-v1")
    last = len(env.task) - 1
    for bad in (-1, -len(env.task), len(env.task)):
        with pytest.raises(IndexError, match=rf"Problem index {bad} is out of range.*indices 0 to {last}"):
            env.reset(seed=0, options={"index": bad})
    _, infos = env.reset(seed=0, options={"index": last})
    assert infos["main"]["task_id"] == env.task.task_id(last)
