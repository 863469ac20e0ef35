"""The bundled algorithms learn on a tiny scripted env; loading by name, ``module:Class`` and entry
points; options in ``algo_kwargs`` (an old top-level key is an error naming it); per-agent returns; hooks and metrics."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from llm_coop_envs.core import CoopEnv
from tests.trainers.bandit import PickTask, TabularPolicy, train_bandit
from trainers.algorithms import AlgorithmBase, AlgorithmNameError, get_algorithm, register_algorithm, registry
from trainers.algorithms.base import Capabilities, LossOptions, leave_one_out, policy_gradient_loss
from trainers.algorithms.options import build_algorithm
from trainers.config import TrainConfig
from trainers.rollout import Group, JointSample, grow_trees, root_node


# ---------------------------------------------------------------------------- learning
@pytest.mark.parametrize("name", ["magrpo", "mareinforce", "marloo", "maremax"])
@pytest.mark.parametrize("per_agent", [False, True])
def test_bundled_multi_agent_algorithms_learn_the_scripted_env(name, per_agent):
    policy = train_bandit(get_algorithm(name), per_agent=per_agent)
    for agent in ("helper", "main"):
        assert policy.prob_of_best(agent) > 0.8, (name, agent, policy.prob_of_best(agent))  # from 1/3


def test_grpo_learns_the_scripted_env_alone():
    assert train_bandit(get_algorithm("grpo"), agents=("main",)).prob_of_best("main") > 0.8


def test_magrpo_own_returns_learns_from_per_agent_rewards():
    policy = train_bandit(get_algorithm("magrpo", own_returns=True), per_agent=True)
    assert min(policy.prob_of_best("helper"), policy.prob_of_best("main")) > 0.8


# ---------------------------------------------------------------------------- advantages
def _group(returns, agent_returns=None, greedy=None):
    returns = np.asarray(returns, dtype=float)
    return Group(returns=returns, rewards=returns, agents=("helper", "main"), depth=0,
                 agent_returns=None if agent_returns is None else np.asarray(agent_returns, dtype=float), greedy=greedy)


def test_leave_one_out_baseline_excludes_the_sample_itself():
    np.testing.assert_allclose(leave_one_out(np.array([1.0, 2.0, 6.0])), [1 - 4, 2 - 3.5, 6 - 1.5])
    group = _group([0.0, 1.0], agent_returns=[[0.0, 3.0], [1.0, 1.0]])
    np.testing.assert_allclose(get_algorithm("marloo").advantages(group), [[-1.0, 2.0], [1.0, -2.0]])
    np.testing.assert_allclose(get_algorithm("marloo").advantages(_group([0.0, 1.0])), [[-1.0, -1.0], [1.0, 1.0]])


def test_remax_baseline_is_the_greedy_return_and_is_required():
    greedy = JointSample(replies={}, observations={}, reward=0.5, return_=0.5, agent_returns={"helper": 0.5, "main": 2.0})
    algorithm = get_algorithm("maremax")
    np.testing.assert_allclose(algorithm.advantages(_group([1.0, 0.0], [[1.0, 3.0], [0.0, 1.0]], greedy)),
                               [[0.5, 1.0], [-0.5, -1.0]])
    assert algorithm.pop_metrics() == {"algo/greedy_return": 0.5}
    with pytest.raises(ValueError, match="greedy"):
        algorithm.advantages(_group([1.0, 0.0]))


def test_rollout_keeps_every_agents_reward_and_infos():
    policy = TabularPolicy(("helper", "main"))
    joint = grow_trees([root_node(CoopEnv(PickTask()), seed=0)], policy.sample, group_size=4)[0]
    np.testing.assert_allclose(joint.agent_returns, np.repeat(joint.returns[:, None], 2, axis=1))
    own = grow_trees([root_node(CoopEnv(PickTask(per_agent=True)), seed=0)], TabularPolicy(("helper", "main")).sample,
                     group_size=4)[0]
    for sample, row in zip(own.samples, own.agent_returns):
        hits = {a: float(sample.replies[a].text == {"helper": "a", "main": "b"}[a]) for a in ("helper", "main")}
        assert list(row) == [hits["helper"], hits["main"]]
        assert sample.reward == sum(hits.values())  # the joint reward, from infos["joint_reward"]
        assert set(sample.infos) == {"helper", "main"}
        assert sample.infos["main"]["agent_reward_components"] == {"main": hits["main"]}


def test_greedy_sampler_adds_one_stepped_greedy_reply_per_node():
    policy = TabularPolicy(("helper", "main"))
    group = grow_trees([root_node(CoopEnv(PickTask()), seed=0)], policy.sample, group_size=3,
                       greedy_sampler=policy.greedy)[0]
    assert len(group.samples) == 3 and group.greedy is not None
    assert {a: c.text for a, c in group.greedy.replies.items()} == {"helper": "a", "main": "a"}  # argmax of ties: 0
    assert group.greedy.reward == 1.0 and group.greedy.return_ == 1.0


# ---------------------------------------------------------------------------- loading
def test_module_class_names_load_without_registration():
    algorithm = get_algorithm("trainers.algorithms.marloo:MARLOO", clip_eps=0.1)
    assert type(algorithm).__name__ == "MARLOO" and algorithm.loss_options.clip_eps == 0.1
    cfg = TrainConfig(algo="tests.trainers.test_algorithms:Halved")
    assert isinstance(build_algorithm(cfg), Halved)
    with pytest.raises(ImportError, match="no_such_module"):
        get_algorithm("no_such_module:Thing")
    with pytest.raises(KeyError, match="module:Class"):
        get_algorithm("no_such_algorithm")


def test_module_class_names_work_in_config_files_and_overrides(tmp_path):
    from trainers.config import load_config
    from trainers.run_folder import prepare_run_folder

    (tmp_path / "run.yaml").write_text("algo: tests.trainers.test_algorithms:Halved\nalgo_kwargs: {clip_eps: 0.1}\n")
    algorithm = build_algorithm(load_config(tmp_path / "run.yaml"))
    assert isinstance(algorithm, Halved) and algorithm.loss_options.clip_eps == 0.1
    assert type(build_algorithm(load_config(overrides=["algo=trainers.algorithms.marloo:MARLOO"]))).__name__ == "MARLOO"
    folder = prepare_run_folder(str(tmp_path), None, "tests.trainers.test_algorithms:Halved", resume=False, overwrite=False)
    assert folder.name.startswith("Halved-")


class Halved(AlgorithmBase):
    """A plug-in used by name in the tests: half of MAGRPO's advantage."""

    def advantages(self, group):
        return 0.5 * (group.returns - group.returns.mean())

    def loss(self, batch):
        return policy_gradient_loss(batch)


def test_registering_a_taken_name_is_an_error():
    register_algorithm("twice_test", Halved)
    with pytest.raises(AlgorithmNameError, match="twice_test"):
        register_algorithm("twice_test", Halved)
    with pytest.raises(AlgorithmNameError, match="magrpo"):
        register_algorithm("magrpo", Halved)
    register_algorithm("twice_test", Halved, replace=True)
    assert isinstance(get_algorithm("twice_test"), Halved)


def test_installed_packages_register_through_entry_points(tmp_path, monkeypatch):
    dist = tmp_path / "my_algos-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-algos\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\nhalved_ep = tests.trainers.test_algorithms:Halved\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_INSTALLED", None)
    assert "halved_ep" in registry.registered_algorithms()
    assert isinstance(get_algorithm("halved_ep"), Halved)
    with pytest.raises(AlgorithmNameError, match="halved_ep"):
        register_algorithm("halved_ep", Halved)
    other = dist.parent / "other_algos-1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: other-algos\nVersion: 1.0\n")
    (other / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nhalved_ep = elsewhere:Thing\n")
    monkeypatch.setattr(registry, "_INSTALLED", None)
    with pytest.raises(AlgorithmNameError, match="Two installed packages"):
        registry.registered_algorithms()
    monkeypatch.setattr(registry, "_INSTALLED", None)  # forget the broken set for later tests


def test_the_base_module_imports_no_plug_in():
    code = ("import sys, trainers.algorithms.base, trainers.algorithms.registry; "
            "assert not [m for m in sys.modules if m.startswith('trainers.algorithms.ma')], sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_single_agent_and_other_flags_are_declared_on_the_base_class():
    assert AlgorithmBase.single_agent is False and get_algorithm("grpo").single_agent is True
    assert Capabilities.of(object()) == Capabilities()
    assert Capabilities.of(get_algorithm("grpo")).single_agent is True
    assert get_algorithm("maremax").needs_greedy_baseline is True


# ---------------------------------------------------------------------------- options
def test_loss_options_live_in_algo_kwargs_and_the_old_keys_name_them():
    from trainers.config import ConfigError, load_config

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        algorithm = build_algorithm(TrainConfig(algo_kwargs={"kl_coef": 0.1, "token_aggregation": "sequence_mean"}))
    assert (algorithm.loss_options.kl_coef, algorithm.loss_options.token_aggregation) == (0.1, "sequence_mean")
    for old, value in (("clip_eps", "0.3"), ("kl_coef", "0.2"), ("token_aggregation", "token_mean")):
        message = rf"^{old} is now algo_kwargs\.{old} \(an option of the algorithm\): write algo_kwargs\.{old}=.* instead\.$"
        with pytest.raises(ConfigError, match=message):
            load_config(overrides=[f"{old}={value}"])
        with pytest.raises(ConfigError, match=message):  # a direct keyword gets the same one line
            TrainConfig(**{old: value})
    with pytest.raises(ValueError, match="token_aggregation"):
        get_algorithm("magrpo", token_aggregation="sum")

    class Plain:  # a plug-in without the base class gets the default loss options
        def advantages(self, group): ...
        def loss(self, batch): ...

    assert Capabilities.of(Plain()).loss_options == LossOptions()


# ---------------------------------------------------------------------------- through the trainer
class Recording(Halved):
    """Records the hooks' calls and logs a metric of its own."""

    def __init__(self, **options):
        super().__init__(**options)
        self.calls = []

    def on_step_start(self, step):
        self.calls.append(("start", step))

    def on_step_end(self, step, metrics):
        self.calls.append(("end", step, "reward/mean" in metrics))

    def advantages(self, group):
        advantages = super().advantages(group)
        self.log("abs_advantage", float(np.abs(advantages).mean()))
        return advantages


def test_trainer_calls_hooks_logs_algorithm_metrics_and_rolls_out_greedy_baselines(tmp_path, tokenizer):
    from tests.trainers.conftest import LetterTask, build_model, tiny_config
    from trainers.metrics_log import read_metrics
    from trainers.trainer import Trainer

    trainer = Trainer(tiny_config(tmp_path, algo="tests.trainers.test_algorithms:Recording", steps=2),
                      env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    history = trainer.train()
    assert trainer.algorithm.calls == [("start", 1), ("end", 1, True), ("start", 2), ("end", 2, True)]
    assert all("algo/abs_advantage" in row for row in history)
    assert "algo/abs_advantage" in read_metrics(tmp_path / "run")[0]
    assert history[0]["agent/helper/reward"] == history[0]["agent/main/reward"] == history[0]["reward/mean"]
    remax = Trainer(tiny_config(tmp_path, algo="maremax", run_name="remax", steps=1), env=CoopEnv(LetterTask()),
                    models=(build_model(tokenizer), tokenizer))
    groups = remax.rollout()
    assert all(g.greedy is not None and set(g.greedy.replies) == {"helper", "main"} for g in groups)
    assert "algo/greedy_return" in remax.train()[0]


# ---------------------------------------------------------------------------- per-token advantages
def _reply_group(lengths):
    from trainers.generation.base import Completion

    samples = tuple(JointSample(replies={a: Completion("x", (), tuple(range(n))) for a, n in zip(("helper", "main"), row)},
                                observations={}) for row in lengths)
    return Group(returns=np.zeros(len(lengths)), rewards=np.zeros(len(lengths)), agents=("helper", "main"), depth=0,
                 samples=samples)


def test_advantage_table_accepts_per_reply_and_per_token_advantages():
    import torch

    from trainers.algorithms.base import advantage_table, advantage_tensor, clipped_surrogate
    from trainers.algorithms.base import LossBatch

    group = _reply_group([(2, 3), (1, 2)])
    assert advantage_table(np.array([1.0, -1.0]), group) == [[1.0, 1.0], [-1.0, -1.0]]
    assert advantage_table([[0.5, [1.0, 0.0, 2.0]], [[3.0], -1.0]], group) == [[0.5, (1.0, 0.0, 2.0)], [(3.0,), -1.0]]
    with pytest.raises(ValueError, match="3 tokens"):
        advantage_table([[0.5, [1.0, 0.0]], [0.0, 0.0]], group)
    with pytest.raises(ValueError, match="shape"):
        advantage_table(np.zeros((2, 3)), group)
    logps = torch.zeros(2, 3, requires_grad=True)
    advantages = advantage_tensor([(1.0, 0.0, 2.0), 0.5], 3, logps)
    assert advantages.tolist() == [[1.0, 0.0, 2.0], [0.5, 0.5, 0.5]]
    batch = LossBatch(agent="main", logps=logps, old_logps=logps.detach(), mask=torch.tensor([[1.0] * 3, [1.0, 1.0, 0.0]]),
                      advantages=advantages, total_replies=2)
    (-(clipped_surrogate(batch) * batch.mask).sum()).backward()
    assert logps.grad.tolist() == [[-1.0, 0.0, -2.0], [-0.5, -0.5, 0.0]]  # −A_t on each reply token


class FirstTokenOnly(AlgorithmBase):
    """Per-token advantages: 1 + the group-relative one on each reply's first token, 0 on the rest."""

    zero_loss_at_zero_advantage = True
    batches: list = []

    def advantages(self, group):
        centred = 1.0 + group.returns - group.returns.mean()  # never 0 on the first token
        return [[[value] + [0.0] * (len(sample.replies[a].completion_ids) - 1) for a in group.agents]
                for sample, value in zip(group.samples, centred)]

    def loss(self, batch):
        FirstTokenOnly.batches.append(batch.advantages.detach().clone())
        return policy_gradient_loss(batch)


def test_per_token_advantages_reach_the_loss(tmp_path, tokenizer):
    from tests.trainers.conftest import LetterTask, build_model, tiny_config
    from trainers.trainer import Trainer

    trainer = Trainer(tiny_config(tmp_path, algo="tests.trainers.test_algorithms:FirstTokenOnly", steps=1),
                      env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    items = trainer.training_items(trainer.rollout())
    for item in items["main"]:
        assert len(item.token_advantages) == len(item.completion_ids) and not any(item.token_advantages[1:])
    FirstTokenOnly.batches.clear()
    trainer.train()
    assert FirstTokenOnly.batches and all(b.dim() == 2 and not b[:, 1:].any() for b in FirstTokenOnly.batches)
