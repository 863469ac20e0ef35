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


def _skip_without_datasets():
    """Without the datasets on this machine, a test that needs one is skipped, not failed; with
    them (CI), a missing dataset still fails."""
    from llm_coop_envs.data.loading import DataNotFoundError

    try:
        return (yield)
    except DataNotFoundError as error:
        if Path(os.environ.get("LLM_COOP_DATA_DIR", _SHARED_DATA)).is_dir():
            raise
        pytest.skip(f"needs a dataset this machine does not have: {str(error).splitlines()[0]}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """Fixtures that build an env load data at setup."""
    return (yield from _skip_without_datasets())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _skip_without_datasets())


@pytest.fixture(scope="session")
def tiny_language_model():
    """A tiny random causal model as the writing reward's scoring model (no download, milliseconds a call)."""
    pytest.importorskip("torch")
    from llm_coop_envs.writing.lm import LanguageModel
    from tests.trainers.conftest import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    return LanguageModel((build_model(tokenizer), tokenizer))
