"""A run's training draws listed again from its config, and the held-out template-twin share."""

from __future__ import annotations

import llm_coop_envs
from trainers.config import load_config
from trainers.draws import problem_seed, template, training_templates, twin_line, twin_share
from trainers.evaluate import make_eval_env

CONFIG = ["env=coop_procedural-v1", "steps=3", "problems_per_step=2", "seed=5", "env_kwargs={level: 1}"]


def test_the_templates_are_the_resets_the_trainer_makes():
    cfg = load_config(overrides=CONFIG)
    env = llm_coop_envs.make("coop_procedural-v1", level=1)
    expected = {template(env.reset(seed=problem_seed(5, step, index, 2))[0]) for step in range(3) for index in range(2)}
    assert training_templates(cfg) == expected and 1 <= len(expected) <= 6
    assert all("#" in text and not any(ch.isdigit() for ch in text) for text in expected)


def test_problem_seeds_never_repeat_across_steps_ranks_and_problems():
    seeds = [problem_seed(0, step, index, 4, world_size=2, rank=rank)
             for step in range(10) for rank in range(2) for index in range(4)]
    assert len(set(seeds)) == len(seeds)


def test_twin_share_counts_held_out_problems_whose_template_was_trained_on():
    cfg = load_config(overrides=[*CONFIG, "eval_env_kwargs={split: test, level: 1}"])
    held_out = make_eval_env(cfg)
    own = {template(held_out.reset(seed=0, options={"index": i})[0]) for i in range(4)}
    assert twin_share(held_out, range(4), own) == (4, 4)
    assert twin_share(held_out, range(4), set()) == (0, 4)
    assert twin_line(1, 4, 6) == ("Held-out problems with a number-masked template twin among the 6 training "
                                  "draws: 1/4 (25 %).")
