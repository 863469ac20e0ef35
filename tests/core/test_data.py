import json

import pytest

from llm_coop_envs.data import DataNotFoundError, load_rows, select_split


def test_shared_data_dir_is_used(data_dir):
    assert len(load_rows("coop_humaneval")) == 82
    assert len(load_rows("tldr")) == 500


def test_arxiv_fields_are_renamed(data_dir):
    row = load_rows("arxiv_abstracts")[0]
    assert row["abstract_text"] == row["abstract"] and row["article_id"] == "0704.0001"


def test_data_path_wins(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([{"task_id": "mine/0", "prompt": "def f():\n", "test": "", "entry_point": "f"}]))
    assert load_rows("coop_humaneval", data_path=path)[0]["task_id"] == "mine/0"


def test_jsonl_and_bad_files(tmp_path):
    good = tmp_path / "rows.jsonl"
    good.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert [r["a"] for r in load_rows("tldr", data_path=good)] == [1, 2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_rows("tldr", data_path=bad)
    with pytest.raises(DataNotFoundError):
        load_rows("tldr", data_path=tmp_path / "missing.jsonl")


def test_published_splits():
    rows = list(range(82))
    assert select_split(rows, "coop_humaneval", "train") == list(range(50))
    assert select_split(rows, "coop_humaneval", "test") == list(range(50, 66))
    assert select_split(rows, "coop_humaneval", "all") == rows
    assert select_split(list(range(10)), "coop_humaneval", "train", custom_data=True) == list(range(8))
    with pytest.raises(ValueError, match="split must be"):
        select_split(rows, "coop_humaneval", "validation")


def test_read_rows_decompresses_gzip(tmp_path):
    import gzip

    from llm_coop_envs.data import read_rows

    lines = tmp_path / "rows.jsonl.gz"
    lines.write_bytes(gzip.compress(b'{"a": 1}\n{"a": 2}\n'))
    listed = tmp_path / "rows.json.gz"
    listed.write_bytes(gzip.compress(b'[{"a": 3}]'))
    assert [r["a"] for r in read_rows(lines)] == [1, 2]
    assert read_rows(listed) == [{"a": 3}]


def test_binary_file_gives_a_clear_error(tmp_path):
    binary = tmp_path / "rows.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(ValueError, match="not a UTF-8 text file"):
        load_rows("mbpp", data_path=binary)
    fake_gzip = tmp_path / "rows.jsonl.gz"
    fake_gzip.write_text('{"a": 1}')
    with pytest.raises(ValueError, match="not a UTF-8 text file"):
        load_rows("mbpp", data_path=fake_gzip)


def test_directory_as_data_path_is_reported_as_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory.*LLM_COOP_DATA_DIR"):
        load_rows("mbpp", data_path=tmp_path)
