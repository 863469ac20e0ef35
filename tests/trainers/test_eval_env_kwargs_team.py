"""A single agent's run given held-out problems by ``eval_env_kwargs`` is evaluated as a single agent."""

from trainers.config import TrainConfig
from trainers.evaluate import make_eval_env


def test_explicit_held_out_kwargs_keep_the_training_team():
    cfg = TrainConfig(env="coop_procedural-v0", env_kwargs={"team": "single", "level": 1}, eval_problems=0,
                      eval_env_kwargs={"split": "test", "level": 1})
    assert make_eval_env(cfg).possible_agents == ["main"]
    paired = TrainConfig(env="coop_procedural-v0", env_kwargs={"team": "single"}, eval_problems=0,
                         eval_env_kwargs={"split": "test", "team": "pair"})  # the held-out kwargs may say otherwise
    assert make_eval_env(paired).possible_agents == ["helper", "main"]


def test_the_bench_evaluates_a_single_agent_as_one():
    from benchmarks.learning.evaluation import eval_env_kwargs

    cfg = TrainConfig(env="coop_procedural-v0", env_kwargs={"team": "single", "level": 1}, eval_problems=0,
                      eval_env_kwargs={"split": "heldout_families"})
    assert eval_env_kwargs(cfg) == {"split": "heldout_families", "team": "single"}
