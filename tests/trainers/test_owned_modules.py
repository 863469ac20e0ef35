"""Algorithm-owned modules: built, moved, prepared, stepped, checkpointed and restored by the trainer."""

from __future__ import annotations

import pytest
import torch

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.algorithms.magrpo import MAGRPO
from trainers.trainer import Trainer


class MeanReturnHead(MAGRPO):
    """MAGRPO plus an owned linear model that regresses each step's mean return (on a constant input)."""

    def build_modules(self, policies):
        self.returns: list[float] = []
        return {"head": torch.nn.Linear(1, 1)}

    def build_optimizer(self, name, module):
        return torch.optim.Adam(module.parameters(), lr=0.1)

    def advantages(self, group):
        self.returns.extend(float(r) for r in group.returns)
        return super().advantages(group)

    def modules_loss(self, modules):
        target = torch.tensor(self.returns).mean()
        self.returns = []
        prediction = modules["head"](torch.ones(1, 1)).squeeze()
        return (prediction - target) ** 2


def _trainer(tmp_path, tokenizer, algorithm, **fields):
    return Trainer(tiny_config(tmp_path, **fields), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer),
                   algorithm=algorithm)


def _bare(trainer, name):
    return trainer.accelerator.unwrap_model(trainer.owned_modules[name])


def test_owned_module_is_stepped_and_saved(tmp_path, tokenizer):
    trainer = _trainer(tmp_path, tokenizer, MeanReturnHead(), steps=2)
    before = {k: v.clone() for k, v in _bare(trainer, "head").state_dict().items()}
    trainer.train()
    after = _bare(trainer, "head").state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert trainer.owned_optimizers["head"].state_dict()["state"], "the module's optimizer never stepped"
    folder = tmp_path / "run" / "checkpoints" / "step-00000002"
    assert (folder / "modules" / "head.safetensors").is_file()


def test_owned_module_and_optimizer_resume_exactly(tmp_path, tokenizer):
    straight = _trainer(tmp_path, tokenizer, MeanReturnHead(), run_name="straight", steps=4)
    straight.train()
    _trainer(tmp_path, tokenizer, MeanReturnHead(), run_name="split", steps=2).train()
    second = _trainer(tmp_path, tokenizer, MeanReturnHead(), run_name="split", steps=4, resume=True)
    assert second.step == 2
    second.train()
    for name, value in _bare(straight, "head").state_dict().items():
        assert torch.equal(_bare(second, "head").state_dict()[name], value), name
    assert_same_optimizer_state(second.owned_optimizers["head"], straight.owned_optimizers["head"])


def assert_same_optimizer_state(left, right):
    a, b = left.state_dict(), right.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys() and a["state"]
    for index, state in a["state"].items():
        for name, value in state.items():
            assert torch.equal(torch.as_tensor(value), torch.as_tensor(b["state"][index][name])), (index, name)


def test_resume_refuses_a_checkpoint_of_other_modules(tmp_path, tokenizer):
    _trainer(tmp_path, tokenizer, MeanReturnHead(), steps=1).train()
    with pytest.raises(ValueError, match="algorithm modules"):
        _trainer(tmp_path, tokenizer, MAGRPO(), steps=2, resume=True)
