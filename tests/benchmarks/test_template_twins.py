"""The bench report's per-seed share of held-out problems whose template the seed's runs trained on."""

from __future__ import annotations

import dataclasses

from benchmarks.learning.plan import Budget
from benchmarks.learning.twins import twin_lines

BUDGET = dataclasses.asdict(Budget(steps=2, problems_per_step=2, group_size=2, eval_every=2, eval_problems=6))


def test_one_line_per_seed_from_the_bench_settings():
    meta = {"env": "coop_procedural-v1", "algorithms": ["magrpo"], "seeds": [0, 1], "budget": BUDGET,
            "overrides": ["env_kwargs={level: 1}", "eval_env_kwargs={split: test, level: 1}"]}
    lines = twin_lines(meta, 6)
    assert len(lines) == 2 and lines[0].startswith("* seed 0: ") and lines[1].startswith("* seed 1: ")
    assert all("/6 (" in line and "among the seed's 4 training draws" in line for line in lines)


def test_an_env_that_cannot_be_made_here_is_said_not_raised():
    meta = {"env": "no_such_env-v0", "algorithms": ["magrpo"], "seeds": [0], "budget": BUDGET, "overrides": []}
    (line,) = twin_lines(meta, 6)
    assert line.startswith("* not computed here (")
