"""Test settings: datasets come from the shared folder beside the repository, never the network."""

import os
from pathlib import Path

import pytest

_SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

if "LLM_COOP_DATA_DIR" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["LLM_COOP_DATA_DIR"] = str(_SHARED_DATA)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = Path(os.environ.get("LLM_COOP_DATA_DIR", _SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"datasets not found at {path}; set LLM_COOP_DATA_DIR")
    return path
