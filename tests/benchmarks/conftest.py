import os

import pytest


@pytest.fixture(autouse=True)
def _shared_data(monkeypatch):
    if "LLM_COOP_DATA_DIR" not in os.environ and os.path.isdir("/work/shared/data"):
        monkeypatch.setenv("LLM_COOP_DATA_DIR", "/work/shared/data")
