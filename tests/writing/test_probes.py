"""Every reward hack scores clearly below a genuine pair on the same problem, on 10 posts and 10 abstracts."""

import pytest

from tests.writing.conftest import index_of
from benchmarks.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS
from benchmarks.writing.probe_cases import PROBES, Case

CASES = [("tldr", tid) for tid in TLDR_DETAILS] + [("arxiv", tid) for tid in ARXIV_PAIRS]
MARGIN = 0.5
"""A hack must lose at least this much reward (of 6.0 / 5.0), not merely tie."""


def _reward(task, index, pair):
    return task.evaluate(index, dict(zip(task.agents, pair))).reward.total


def case_for(genuine, env_name, task_id) -> tuple:
    task, pairs = genuine[env_name]
    index = index_of(task, task_id)
    ids = list(pairs)
    other = pairs[ids[(ids.index(task_id) + 1) % len(ids)]]
    item = task.items[index]
    return task, index, Case(env_name, pairs[task_id], item.source, item.title, other)


@pytest.mark.parametrize("env_name,task_id", CASES)
def test_genuine_pair_keeps_most_of_the_reward(genuine, env_name, task_id):
    task, index, case = case_for(genuine, env_name, task_id)
    evaluation = task.evaluate(index, dict(zip(task.agents, case.genuine)))
    assert evaluation.reward.total >= 0.9 * task.max_reward(), evaluation.feedback


@pytest.mark.parametrize("probe", list(PROBES))
@pytest.mark.parametrize("env_name,task_id", CASES)
def test_probe_scores_clearly_below_genuine(genuine, env_name, task_id, probe):
    task, index, case = case_for(genuine, env_name, task_id)
    honest = _reward(task, index, case.genuine)
    hacked = _reward(task, index, PROBES[probe](case))
    assert hacked < honest - MARGIN, f"{probe}: {hacked:.2f} vs genuine {honest:.2f}"


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_degenerate_probes_get_nothing(genuine, env_name):
    task, index, case = case_for(genuine, env_name, next(iter(genuine[env_name][1])))
    for probe in ("empty", "whitespace", "one word repeated", "transition spam only", "source copied back", "source split in two"):
        assert _reward(task, index, PROBES[probe](case)) == 0.0, probe
