"""Coding tests read the shared datasets; point the loader at them unless the caller already did."""

import os
from pathlib import Path

import pytest

_SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.fixture(autouse=True, scope="session")
def _coding_data_dir():
    if "LLM_COOP_DATA_DIR" not in os.environ and _SHARED_DATA.is_dir():
        os.environ["LLM_COOP_DATA_DIR"] = str(_SHARED_DATA)
    yield
