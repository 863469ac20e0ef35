"""Hub datasets through huggingface_hub file downloads, against a local server (never the real Hub).

Each load runs in a fresh interpreter: huggingface_hub reads HF_HUB_OFFLINE and its cache folder
when imported, and the test session itself runs offline (tests/conftest.py).
"""

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_coop_envs.data.hub import HubUnavailable, choose_files
from tests.core.hub_server import FakeHub

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    {"task_id": f"m/{i}", "prompt": f"def f{i}():\n", "test": "def check(c):\n    pass\n", "entry_point": f"f{i}"}
    for i in range(3)
]


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def load_in_fresh_process(home: Path, endpoint: str, dataset="mbpp", offline=False, code=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LLM_COOP_", "TRANSFORMERS_"))}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    code = code or f"import json; from llm_coop_envs.data import load_rows; print(json.dumps(load_rows({dataset!r})))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def rows_of(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_split_file_is_downloaded_once_then_served_from_the_cache(tmp_path):
    repo = {"data/test.jsonl": jsonl(ROWS), "data/train.jsonl": jsonl(ROWS[:1]), "README.md": b"# card"}
    with FakeHub({"OpenMLRL/MBPP": repo}) as hub:
        assert rows_of(load_in_fresh_process(tmp_path, hub.endpoint)) == ROWS
        assert "GET /api/datasets/OpenMLRL/MBPP/tree/main" in hub.requests
        assert "GET /datasets/OpenMLRL/MBPP/resolve/main/data/test.jsonl" in hub.requests
        assert not any("train.jsonl" in r for r in hub.requests)
        assert rows_of(load_in_fresh_process(tmp_path, hub.endpoint, offline=True)) == ROWS
    # the server is gone: the cached copy still serves
    assert rows_of(load_in_fresh_process(tmp_path, hub.endpoint)) == ROWS


def test_renames_apply_to_hub_rows(tmp_path):
    abstracts = [{"id": "0704.0001", "abstract": "Some text."}]
    repo = {"test.json.gz": gzip.compress(json.dumps(abstracts).encode())}
    with FakeHub({"OpenMLRL/arXiv_abstract": repo}) as hub:
        (row,) = rows_of(load_in_fresh_process(tmp_path, hub.endpoint, dataset="arxiv_abstracts"))
    assert row["abstract_text"] == "Some text." and row["article_id"] == "0704.0001"


def test_sharded_parquet_split(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet

    def parquet(rows) -> bytes:
        buffer = io.BytesIO()
        pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), buffer)
        return buffer.getvalue()

    repo = {
        "data/test-00000-of-00002.parquet": parquet(ROWS[:2]),
        "data/test-00001-of-00002.parquet": parquet(ROWS[2:]),
        "data/train-00000-of-00001.parquet": parquet(ROWS[:1]),
    }
    with FakeHub({"OpenMLRL/MBPP": repo}) as hub:
        assert rows_of(load_in_fresh_process(tmp_path, hub.endpoint)) == ROWS


@pytest.mark.parametrize("server", ["none", "missing_repo"])
def test_no_data_fails_at_once_with_one_message(tmp_path, server):
    code = "import llm_coop_envs; llm_coop_envs.make('mbpp-v1')"
    if server == "none":
        result = load_in_fresh_process(tmp_path, "http://127.0.0.1:9", code=code)  # nothing listens on port 9
    else:
        with FakeHub({}) as hub:
            result = load_in_fresh_process(tmp_path, hub.endpoint, code=code)
        assert len(hub.requests) <= 2  # a listing (and huggingface_hub's own start-up call): no retries
    assert result.returncode != 0
    assert result.stderr.count("DataNotFoundError: ") == 1  # one error, not a chain
    message = result.stderr.split("DataNotFoundError: ", 1)[1]
    assert message.startswith("No data for 'mbpp'")
    for way in ("data_path=", "LLM_COOP_DATA_DIR", "'mbpp.json'", "'OpenMLRL/MBPP'", "Hugging Face Hub"):
        assert way in message, way


def test_offline_mode_without_cache_names_the_reason(tmp_path):
    result = load_in_fresh_process(tmp_path, "http://127.0.0.1:9", offline=True)
    assert result.returncode != 0 and "HF_HUB_OFFLINE is set" in result.stderr


def test_choose_files():
    names = ["README.md", "data/test-00000-of-00001.parquet", "data/train-00000-of-00001.parquet", "test.jsonl"]
    assert choose_files(names, "test", "r") == ["test.jsonl"]  # JSON preferred: no pyarrow needed
    assert choose_files(names[:3], "test", "r") == ["data/test-00000-of-00001.parquet"]
    assert choose_files(["README.md", "problems.json"], "test", "r") == ["problems.json"]  # the only data file
    assert choose_files(["contest.jsonl", "test.jsonl"], "test", "r") == ["test.jsonl"]  # a word, not a substring
    with pytest.raises(HubUnavailable, match="no JSON"):
        choose_files(["README.md", "a.json", "b.json"], "test", "r")
