"""Fixtures: the writing tasks over all rows, and the genuine pairs keyed by task id."""

import warnings

import pytest

from llm_coop_envs.writing import arxiv_intro, tldr
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS


@pytest.fixture(scope="session")
def tldr_task(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # -v1 is deprecated; its probes are still guarded
        return tldr.env_v1(split="all").task


@pytest.fixture(scope="session")
def arxiv_task(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return arxiv_intro.env_v1(split="all").task


def index_of(task, task_id: str) -> int:
    return next(i for i in range(len(task)) if task.task_id(i) == task_id)


@pytest.fixture(scope="session")
def genuine(tldr_task, arxiv_task):
    """env name -> (task, {task_id: (first text, second text)})."""
    tldr_pairs = {tid: (tldr_task.items[index_of(tldr_task, tid)].reference, d) for tid, d in TLDR_DETAILS.items()}
    return {"tldr": (tldr_task, tldr_pairs), "arxiv": (arxiv_task, dict(ARXIV_PAIRS))}


@pytest.fixture(scope="session")
def v2_tasks(data_dir):
    """env name -> the ``-v2`` task over all rows."""
    return {"tldr": tldr.env_v2(split="all").task, "arxiv": arxiv_intro.env_v2(split="all").task}
