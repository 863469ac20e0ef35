"""Per step: how many groups could teach correctness (tests vary) or cooperation, and how often the
ratio clipping was active."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trainers.algorithms.base import LossBatch  # noqa: E402
from trainers.rollout import Group  # noqa: E402
from trainers.step_metrics import clip_counts, merge_rank_metrics, reward_records  # noqa: E402


class _Sample:
    def __init__(self, **components):
        self.components = components
        self.reward = sum(components.values())
        self.solved, self.return_, self.agent_rewards = False, self.reward, {}


def _group(*samples):
    returns = np.array([s.reward for s in samples])
    return Group(returns=returns, rewards=returns, agents=("helper", "main"), depth=0, samples=tuple(samples))


def test_groups_whose_tests_or_cooperation_vary_are_counted():
    groups = [
        _group(_Sample(syntax=1.0, tests=0.0), _Sample(syntax=0.0, tests=0.0)),  # formatting only
        _group(_Sample(tests=0.5, uses_helper=0.0), _Sample(tests=0.0, uses_helper=0.0)),  # tests vary
        _group(_Sample(tests=1.0, uses_helper=0.5), _Sample(tests=1.0)),  # cooperation varies (absent = 0)
    ]
    records = reward_records(groups)
    assert (records["train/groups_tests_vary"], records["train/groups_coop_vary"]) == (1.0, 1.0)
    rank = {"rewards": records, "agents": {}, "perf": dict.fromkeys(
        ("perf/rollout_s", "perf/update_s", "perf/step_s", "perf/generated_tokens", "perf/problems"), 1.0)}
    merged = merge_rank_metrics([rank, rank])  # summed over processes, like the other group counts
    assert (merged["train/groups_tests_vary"], merged["train/groups_coop_vary"]) == (2.0, 2.0)


def test_the_clip_count_is_the_tokens_whose_clipped_term_is_active():
    old = torch.zeros(2, 3)
    logps = torch.log(torch.tensor([[1.5, 1.1, 0.5], [1.5, 0.5, 1.0]]))  # ratios
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    batch = LossBatch(agent="main", logps=logps, old_logps=old, mask=mask, advantages=torch.tensor([1.0, -1.0]),
                      clip_eps=0.2)
    # Row 1 (A > 0): 1.5 is clipped, 1.1 is not, 0.5 is not (the min keeps the unclipped term).
    # Row 2 (A < 0): 0.5 is clipped, 1.5 is not; the third token is masked out.
    assert clip_counts(batch) == (2.0, 5.0)
    same = LossBatch(agent="main", logps=old, old_logps=old, mask=mask, advantages=torch.tensor([1.0, -1.0]))
    assert clip_counts(same) == (0.0, 5.0)  # the first pass over a rollout: ratio 1, nothing clipped


def test_a_training_step_logs_the_signal_metrics(tmp_path, tiny_models):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, tiny_config
    from trainers.trainer import Trainer

    cfg = tiny_config(tmp_path, steps=1, algo_kwargs={"updates_per_rollout": 2})
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), models=tiny_models)
    (metrics,) = trainer.train()
    assert metrics["train/groups_tests_vary"] == 0.0  # the letter task reports no tests component
    for agent in ("helper", "main"):
        assert 0.0 <= metrics[f"agent/{agent}/clip_fraction"] <= 1.0 and metrics[f"agent/{agent}/grad_norm"] >= 0.0
        assert metrics[f"agent/{agent}/grad_clipped"] in (0.0, 0.5, 1.0)  # of the last pass's optimizer steps


def test_grad_clipped_counts_the_steps_above_max_grad_norm(tmp_path, tiny_models):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, tiny_config
    from trainers.trainer import Trainer

    cfg = tiny_config(tmp_path, steps=1, max_grad_norm=1e-12)  # every non-zero gradient is clipped
    (metrics,) = Trainer(cfg, env=CoopEnv(LetterTask()), models=tiny_models).train()
    for agent in ("helper", "main"):
        assert metrics[f"agent/{agent}/grad_clipped"] == float(metrics[f"agent/{agent}/grad_norm"] > 1e-12)
