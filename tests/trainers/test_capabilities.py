"""What the trainer reads from an algorithm is one declared record, :class:`Capabilities`, read once per
run from the algorithm's attributes (defaults for those it lacks); the algorithm is built once per run;
plug-ins written as docs/algorithms.md shows still train."""

from __future__ import annotations

import re

import numpy as np
import pytest

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from tests.trainers.test_plugin_docs_agree import ROOT, example_class_source
from trainers.algorithms import AlgorithmBase, get_algorithm, policy_gradient_loss
from trainers.algorithms.base import Capabilities, LossOptions


class PlainDeclaring:
    """A plug-in without the base class that declares flags as class attributes (docs/algorithms.md)."""

    single_agent = True
    zero_loss_at_zero_advantage = True
    minibatch_size = "2"  # a digit string from a command line counts

    def advantages(self, group):
        return group.returns - group.returns.mean()

    def loss(self, batch):
        return policy_gradient_loss(batch)


def test_the_record_reads_declared_attributes_and_defaults_the_rest():
    declared = Capabilities.of(PlainDeclaring())
    assert (declared.single_agent, declared.zero_loss_at_zero_advantage, declared.minibatch_size) == (True, True, 2)
    assert declared.loss_options == LossOptions() and declared.on_step_start is None and declared.module_updates == 1
    assert Capabilities.of(object()) == Capabilities()


def test_the_base_class_declares_the_records_defaults():
    base = AlgorithmBase()
    for name in ("single_agent", "zero_loss_at_zero_advantage", "needs_greedy_baseline", "module_updates",
                 "minibatch_size", "updates_per_rollout", "loss_options"):
        assert getattr(base.capabilities, name) == getattr(Capabilities(), name), name
    maremax = get_algorithm("maremax", kl_coef=0.1, minibatch_size=4).capabilities
    assert maremax.needs_greedy_baseline and maremax.loss_options.kl_coef == 0.1 and maremax.minibatch_size == 4
    assert callable(maremax.on_step_end) and callable(maremax.build_modules)
    assert get_algorithm("mappo", value_updates=3).capabilities.module_updates == 3


def test_a_bad_declaration_is_a_clear_error():
    with pytest.raises(ValueError, match="minibatch_size"):
        Capabilities(minibatch_size=0)
    with pytest.raises(TypeError, match="on_step_end"):
        Capabilities(on_step_end=3)
    with pytest.raises(TypeError, match="LossOptions"):
        Capabilities(loss_options={"clip_eps": 0.1})


def _trainer(tmp_path, tokenizer, algorithm, **fields):
    from trainers.trainer import Trainer

    cfg = tiny_config(tmp_path, steps=1, **fields)
    return Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer), algorithm=algorithm)


def _docs_block(name: str) -> str:
    page = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    return re.search(rf"```python\n((?:(?!```).)*?class {name}\b.*?)```", page, re.S).group(1)


def test_plug_ins_written_as_the_docs_show_train_one_step(tmp_path, tokenizer):
    scope: dict = {}
    exec(compile(example_class_source(), "algorithms.md", "exec"), scope)  # BestOfGroup: no base class
    best = _trainer(tmp_path, tokenizer, scope["BestOfGroup"](length_cost=0.002), run_name="best")
    assert best.capabilities == Capabilities() and np.isfinite(best.train()[0]["agent/main/loss"])
    halved_source = _docs_block("Halved").split("\nalgorithm = Halved(")[0]  # the subclass, without its asserts
    exec(compile(halved_source, "algorithms.md", "exec"), scope)
    halved = _trainer(tmp_path, tokenizer, scope["Halved"](scale=0.25, kl_coef=0.01), run_name="halved")
    assert halved.loss_options.kl_coef == 0.01
    assert "algo/abs_advantage" in halved.train()[0]


def test_a_declared_single_agent_plug_in_is_refused_on_a_team(tmp_path, tokenizer):
    with pytest.raises(ValueError, match="one agent doing the whole task"):
        _trainer(tmp_path, tokenizer, PlainDeclaring())


def test_the_command_line_builds_the_algorithm_once(tmp_path, monkeypatch):
    import trainers.trainer
    from trainers import cli
    from trainers.algorithms import register_algorithm

    built = []

    class Counted(AlgorithmBase):
        def __init__(self, **options):
            super().__init__(**options)
            built.append(self)

    register_algorithm("counted_once_test", Counted, replace=True)
    passed = []

    class StopAtOnce:  # the trainer's seat: records what it was given, trains nothing
        def __init__(self, cfg, **objects):
            passed.append(objects["algorithm"])
            self.agents, self.run_dir, self.step = ("helper", "main"), tmp_path, 0

        def train(self):
            raise KeyboardInterrupt

        def close(self):
            pass

    monkeypatch.setattr(trainers.trainer, "Trainer", StopAtOnce)
    cfg = tiny_config(tmp_path, env="coop_basics-v1", algo="counted_once_test")
    env, eval_env, algorithm = cli.check_names(cfg)
    cli.run_training(cfg, env, eval_env, algorithm)
    assert built == passed == [algorithm]
