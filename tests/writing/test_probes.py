"""Every reward hack scores below a genuine pair on the same problem, on several real rows."""

import pytest

from tests.writing.conftest import index_of
from tests.writing.genuine import ARXIV_PAIRS, TLDR_DETAILS
from tests.writing.probes import PROBES

CASES = [("tldr", tid) for tid in TLDR_DETAILS] + [("arxiv", tid) for tid in ARXIV_PAIRS]
MARGIN = 0.5
"""A hack must lose at least this much reward (of 4.0 / 3.0), not merely tie."""


def _reward(task, index, pair):
    return task.evaluate(index, dict(zip(task.agents, pair))).reward.total


@pytest.mark.parametrize("env_name,task_id", CASES)
def test_genuine_pair_scores_high(genuine, env_name, task_id):
    task, pairs = genuine[env_name]
    evaluation = task.evaluate(index_of(task, task_id), dict(zip(task.agents, pairs[task_id])))
    assert evaluation.reward.total >= 0.9 * task.max_reward() - 0.5, evaluation.feedback


@pytest.mark.parametrize("probe", list(PROBES))
@pytest.mark.parametrize("env_name,task_id", CASES)
def test_probe_scores_below_genuine(genuine, env_name, task_id, probe):
    task, pairs = genuine[env_name]
    index = index_of(task, task_id)
    ids = list(pairs)
    other = pairs[ids[(ids.index(task_id) + 1) % len(ids)]]
    honest = _reward(task, index, pairs[task_id])
    hacked = _reward(task, index, PROBES[probe](pairs[task_id], task.items[index].source, other))
    # Known limit: nothing checks that a text is about its own source (beyond ROUGE for the TL;DR),
    # so a well-written text about a neighbouring paper loses only the overlap credit.
    margin = 0.0 if probe == "mismatched pair" else MARGIN
    assert hacked < honest - margin, f"{probe}: {hacked:.2f} vs genuine {honest:.2f}"


@pytest.mark.parametrize("env_name", ["tldr", "arxiv"])
def test_degenerate_probes_get_nothing(genuine, env_name):
    task, pairs = genuine[env_name]
    task_id, pair = next(iter(pairs.items()))
    index = index_of(task, task_id)
    for probe in ("empty", "whitespace", "one word repeated", "transition spam only", "source copied back", "source split in two"):
        assert _reward(task, index, PROBES[probe](pair, task.items[index].source, pair)) == 0.0, probe
