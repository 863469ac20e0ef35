"""A training env narrowed to some levels never narrows the held-out evaluation silently: the trainer
refuses without an explicit ``eval_env_kwargs``, the bench keeps every level."""

from __future__ import annotations

import pytest

import llm_coop_envs
from trainers.config import ConfigError, held_out_kwargs, load_config


def test_the_trainer_refuses_a_narrowed_training_env_without_eval_env_kwargs():
    with pytest.raises(ConfigError, match=r"env_kwargs.tier=1 narrows .* eval_env_kwargs='\{split: test\}' keeps every level"):
        load_config(overrides=["env=coop_basics-v0", "env_kwargs.tier=1", "eval_problems=43"])


@pytest.mark.parametrize("extra", [["eval_env_kwargs.split=test"], ["eval_problems=0"], ["env_kwargs.tier=null"]])
def test_saying_what_to_evaluate_or_not_evaluating_is_accepted(extra):
    cfg = load_config(overrides=["env=coop_basics-v0", "env_kwargs.tier=1", "eval_problems=43", *extra])
    assert cfg.env_kwargs["tier"] in (1, None)


def test_the_procedural_suites_level_is_a_narrowing_keyword_too():
    with pytest.raises(ConfigError, match="env_kwargs.level=1"):
        load_config(overrides=["env=coop_basics-v0", "env_kwargs.level=1", "eval_problems=4"])


def test_held_out_kwargs_keep_every_level_and_the_rest():
    assert held_out_kwargs({"tier": 1, "team": "single", "split": "train"}) == {"team": "single", "split": "test"}


def test_the_bench_evaluates_every_held_out_level_when_training_is_narrowed():
    from benchmarks.learning.evaluation import EVAL_SEED, eval_env_kwargs
    from trainers.evaluate import available_problems  # the bench plays the trainer's greedy episodes

    cfg = load_config(overrides=["env=coop_basics-v0", "env_kwargs.tier=1", "eval_problems=0"])
    kwargs = eval_env_kwargs(cfg)
    assert kwargs == {"split": "test"}
    everything = len(available_problems(llm_coop_envs.make("coop_basics-v0", **kwargs), EVAL_SEED, 100))
    narrowed = len(available_problems(llm_coop_envs.make("coop_basics-v0", split="test", tier=1), EVAL_SEED, 100))
    assert (everything, narrowed) == (43, 15)
