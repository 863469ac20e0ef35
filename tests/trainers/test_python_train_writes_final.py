"""``Trainer(cfg).train()`` from Python ends as ``llm-coop train`` does: ``final/`` holds each agent's
exported adapter (the weights of the last step), its tokenizer and ``final/provenance.json``; there is
one code path, so nothing is left for a script to remember."""

from __future__ import annotations

import json

import torch
from safetensors.torch import load_file

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.trainer import Trainer


def _lora_b(tensors) -> list[torch.Tensor]:
    """The LoRA B matrices by name order: zero when an adapter is made, moved only by training."""
    return [tensors[name] for name in sorted(tensors) if "lora_B" in name]


def test_train_from_python_exports_the_trained_weights_to_final(tmp_path, tokenizer):
    trainer = Trainer(tiny_config(tmp_path, steps=2), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    trainer.train()
    trainer.close()
    final = tmp_path / "run" / "final"
    record = json.loads((final / "provenance.json").read_text(encoding="utf-8"))
    assert record["env"]["id"] == "letters-v0" and record["algorithm"]["import_path"].endswith(":MAGRPO")
    for agent in ("helper", "main"):
        assert (final / agent / "adapter_config.json").is_file() and (final / agent / "tokenizer_config.json").is_file()
        exported = _lora_b(load_file(str(final / agent / "adapter_model.safetensors")))
        trained = _lora_b(trainer.policies.state_dict(agent))
        assert exported and len(exported) == len(trained)
        assert any(float(b.abs().sum()) > 0 for b in exported)  # trained, not the adapter as made
        assert all(torch.equal(e.cpu(), t.detach().cpu()) for e, t in zip(exported, trained))


def test_training_in_parts_leaves_the_last_parts_weights_in_final(tmp_path, tokenizer):
    trainer = Trainer(tiny_config(tmp_path, steps=4), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    trainer.train(steps=1)
    after_one = _lora_b(load_file(str(tmp_path / "run" / "final" / "main" / "adapter_model.safetensors")))
    trainer.train(steps=1)
    trainer.close()
    after_two = _lora_b(load_file(str(tmp_path / "run" / "final" / "main" / "adapter_model.safetensors")))
    assert any(not torch.equal(a, b) for a, b in zip(after_one, after_two))
    assert all(torch.equal(e.cpu(), t.detach().cpu()) for e, t in zip(after_two, _lora_b(trainer.policies.state_dict("main"))))
