"""load_policies: a checkpoint's trained weights back in fresh policies, as evaluation uses them."""

import pytest
import torch

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.loading import checkpoint_folder, load_policies
from trainers.trainer import Trainer


def letters_env():
    return CoopEnv(LetterTask())


@pytest.fixture
def trained_run(tmp_path, tokenizer):
    """A one-step run whose base model is a local folder, so a checkpoint names a loadable model."""
    build_model(tokenizer).save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    if "letters-v0" not in llm_coop_envs.registered_ids():
        llm_coop_envs.register("letters-v0", letters_env)
    cfg = tiny_config(tmp_path, model=str(tmp_path / "m"), steps=1)
    trainer = Trainer(cfg, env=letters_env(), models=(build_model(tokenizer), tokenizer))
    trainer.train()
    trained = {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}
    trainer.close()
    return tmp_path / "run", trained


def test_the_trained_weights_come_back_from_the_run_folder(trained_run):
    run, trained = trained_run
    loaded = load_policies(run)
    assert loaded.folder == checkpoint_folder(run) == run / "checkpoints" / "step-00000001"
    assert loaded.step == 1 and loaded.agents == ("helper", "main") and loaded.config.model.endswith("m")
    for key, tensors in trained.items():
        again = loaded.policies.state_dict(key)
        assert all(torch.equal(again[name], tensor) for name, tensor in tensors.items())


def test_the_evaluation_team_uses_the_checkpoint(trained_run):
    from benchmarks.baselines.trainers_adapter import checkpoint_team
    from trainers.config import SamplingConfig

    run, _ = trained_run
    team = checkpoint_team(run, sampling=SamplingConfig(temperature=0.0, max_new_tokens=4))
    assert set(team) == {"helper", "main"} and team["main"].model["step"] == 1
    assert team["main"].model["checkpoint"] == str(run / "checkpoints" / "step-00000001")
    [reply] = team["helper"](["Write the letter a."], "helper")
    assert isinstance(reply.text, str)


def test_a_folder_without_a_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="No checkpoint in"):
        load_policies(tmp_path)
