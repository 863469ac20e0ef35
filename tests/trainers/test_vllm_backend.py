"""The vLLM backend in colocate mode, against a stand-in ``vllm`` module (no vLLM, no GPU needed):
each agent's rows carry its own LoRARequest, both agents go in one generate call, an update re-saves
the adapters under new ids and folders (old folders removed), sampling settings map onto
SamplingParams, and token ids and log-probs come back as Completions."""

from __future__ import annotations

import re
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.trainers.conftest import tiny_config  # noqa: E402
from tests.trainers.vllm_standins import fake_vllm_modules, read_adapter, standin_logprob  # noqa: E402
from trainers.config import SamplingConfig  # noqa: E402
from trainers.generation import backend_from_config  # noqa: E402
from trainers.generation.base import GenerationRequest  # noqa: E402
from trainers.generation.vllm_backend import VLLMBackend  # noqa: E402
from trainers.policy import build_policies  # noqa: E402

SAMPLING = SamplingConfig(temperature=0.7, top_p=0.9, max_new_tokens=6, stop=("\n\n",))
OBSERVATIONS = {"helper": "def add(x, y): return", "main": "helper main agents cooperate"}


@pytest.fixture()
def fake_vllm(monkeypatch):
    modules = fake_vllm_modules()
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return modules["vllm"]


def _policies(tmp_path, tiny_models, **fields):
    model, tokenizer = tiny_models
    model.config.name_or_path = "tiny-base"  # what vLLM would load: the base model's id or folder
    policies = build_policies(("helper", "main"), tiny_config(tmp_path, **fields), tiny_models)
    _perturb(policies, seed=1)  # peft starts lora_B at zero: make the adapters differ
    return policies


def _perturb(policies, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for key in policies.keys:
            for name, param in policies.named_trainable(key).items():
                if "lora_B" in name:
                    param.add_(torch.randn_like(param))


def _requests(n=3, sampling=SAMPLING):
    return [GenerationRequest(agent, obs, n, sampling) for agent, obs in OBSERVATIONS.items()]


def _served_equals_model(engine_tensors, policies, key):
    """The tensors vLLM loaded are the trained ones (peft drops the adapter name when it saves)."""
    adapter = policies.slot_of_key(key).adapter
    trained = policies.named_trainable(key).items()
    current = {re.sub(rf"\.{re.escape(adapter)}(?=\.)", "", name): p.detach() for name, p in trained}
    assert set(engine_tensors) == set(current)
    return all(torch.equal(engine_tensors[n], current[n]) for n in current)


def test_each_agent_rows_carry_its_own_lora_request_in_one_call(tmp_path, tiny_models, fake_vllm):
    policies = _policies(tmp_path, tiny_models)
    backend = VLLMBackend(policies, adapter_dir=str(tmp_path / "adapters"))
    llm = backend.engine.llm
    out = backend.generate(_requests())
    assert len(llm.calls) == 1  # both agents batched by vLLM together
    call = llm.calls[0]
    names = [lora.lora_name for lora in call["loras"]]
    assert names == [backend.served("helper").name, backend.served("main").name]
    assert len({lora.lora_int_id for lora in call["loras"]}) == 2
    for agent, prompt in zip(OBSERVATIONS, call["prompts"]):
        assert tuple(prompt["prompt_token_ids"]) == policies.prompt_ids(agent, OBSERVATIONS[agent])
    for key in policies.keys:
        assert _served_equals_model(llm.loaded[backend.served(key).int_id], policies, key)
    assert [len(cs) for cs in out] == [3, 3]
    assert out[0][0].completion_ids != out[1][0].completion_ids  # different adapters, different replies


def test_engine_options_and_sampling_params_are_mapped(tmp_path, tiny_models, fake_vllm):
    backend = VLLMBackend(_policies(tmp_path, tiny_models), gpu_memory_fraction=0.45, max_loras=3, dtype="float16")
    llm = backend.engine.llm
    assert llm.model == "tiny-base"
    assert llm.options == {
        "dtype": "float16", "enable_lora": True, "max_loras": 3, "max_lora_rank": 8, "gpu_memory_utilization": 0.45,
        "logprobs_mode": "processed_logprobs",
    }  # lora_r=4 rounds up to vLLM's smallest rank above it
    backend.generate(_requests(n=2))
    params = llm.calls[0]["params"][0]
    assert (params.n, params.temperature, params.top_p, params.max_tokens) == (2, 0.7, 0.9, 6)
    assert params.stop == ["\n\n"] and params.logprobs == 0
    backend.generate(_requests(sampling=SamplingConfig(temperature=0.0, max_new_tokens=4)))
    params = llm.calls[1]["params"][0]
    assert params.temperature == 0.0 and params.stop is None


def test_completions_carry_token_ids_logprobs_and_truncation(tmp_path, tiny_models, fake_vllm):
    policies = _policies(tmp_path, tiny_models)
    backend = VLLMBackend(policies)
    out = backend.generate(_requests())
    flat = [c for cs in out for c in cs]
    for agent, completions in zip(OBSERVATIONS, out):
        for completion in completions:
            assert completion.prompt_ids == policies.prompt_ids(agent, OBSERVATIONS[agent])
            assert completion.text == " ".join(map(str, completion.completion_ids))
            assert completion.logprobs == tuple(standin_logprob(k) for k in range(len(completion.completion_ids)))
            assert completion.truncated == (len(completion.completion_ids) == SAMPLING.max_new_tokens)
    assert {c.truncated for c in flat} == {True, False}  # the stand-in ends some replies early


def test_update_resaves_adapters_under_new_ids_and_removes_old_folders(tmp_path, tiny_models, fake_vllm):
    policies = _policies(tmp_path, tiny_models)
    backend = VLLMBackend(policies, adapter_dir=str(tmp_path / "adapters"))
    llm = backend.engine.llm
    before = backend.generate(_requests())
    old = {key: backend.served(key) for key in policies.keys}
    _perturb(policies, seed=2)  # an optimizer update
    backend.sync_weights()
    after = backend.generate(_requests())
    for key in policies.keys:
        new = backend.served(key)
        assert new.int_id not in {a.int_id for a in old.values()} and new.name != old[key].name
        assert not old[key].path.exists() and new.path.is_dir()
        assert _served_equals_model(llm.loaded[new.int_id], policies, key)  # the fresh weights are served
        assert not _served_equals_model(llm.loaded[old[key].int_id], policies, key)
    served = sorted(backend.served(key).name for key in policies.keys)
    assert sorted(p.name for p in backend.adapter_folder.iterdir()) == served
    assert [[c.completion_ids for c in cs] for cs in before] != [[c.completion_ids for c in cs] for cs in after]
    backend.close()
    assert not backend.adapter_folder.exists()


def test_shared_policy_serves_one_adapter_for_every_agent(tmp_path, tiny_models, fake_vllm):
    backend = VLLMBackend(_policies(tmp_path, tiny_models, policy="shared"))
    backend.generate(_requests())
    loras = backend.engine.llm.calls[0]["loras"]
    assert loras[0] == loras[1] == fake_vllm.lora.request.LoRARequest(
        backend.served("helper").name, backend.served("helper").int_id, str(backend.served("helper").path)
    )


def test_backend_from_config_builds_the_colocated_engine(tmp_path, tiny_models, fake_vllm):
    cfg = tiny_config(tmp_path, backend="vllm", vllm_max_loras=4, vllm_gpu_memory_fraction=0.5)
    backend = backend_from_config(cfg, _policies(tmp_path, tiny_models))
    assert isinstance(backend, VLLMBackend)
    assert backend.engine.llm.options["max_loras"] == 4 and backend.engine.llm.options["gpu_memory_utilization"] == 0.5


def test_too_few_lora_slots_and_unnamed_base_are_clear_errors(tmp_path, tiny_models, fake_vllm):
    policies = _policies(tmp_path, tiny_models)
    with pytest.raises(ValueError, match="vllm_max_loras"):
        VLLMBackend(policies, max_loras=1)
    policies.slots["helper"].model.get_base_model().config.name_or_path = ""
    with pytest.raises(ValueError, match="name_or_path"):
        VLLMBackend(policies)


def test_full_fine_tuning_and_different_bases_are_refused(tmp_path, tiny_models, fake_vllm):
    full = build_policies(("helper", "main"), tiny_config(tmp_path, policy="separate", lora_r=0), tiny_models)
    with pytest.raises(ValueError, match="full fine-tuning"):
        VLLMBackend(full, model="tiny-base")
    separate = _policies(tmp_path, tiny_models, policy="separate")
    separate.slots["main"].model.get_base_model().config.name_or_path = "another-base"
    with pytest.raises(ValueError, match="heterogeneous agents"):
        VLLMBackend(separate)


def test_vllm_missing_gives_a_clear_error(tmp_path, tiny_models, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail even where vLLM is installed
    with pytest.raises(ImportError, match=re.escape("llm-coop-envs[vllm]")):
        VLLMBackend(_policies(tmp_path, tiny_models))


def test_trainer_step_with_vllm_backend_serves_the_updated_adapters(tmp_path, tiny_models, fake_vllm):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask
    from trainers.trainer import Trainer

    tiny_models[0].config.name_or_path = "tiny-base"
    trainer = Trainer(tiny_config(tmp_path, backend="vllm", steps=1), env=CoopEnv(LetterTask()), models=tiny_models)
    first = {key: trainer.backend.served(key) for key in trainer.policies.keys}
    trainer.train()
    llm = trainer.backend.engine.llm
    assert llm.calls and all(len({lr.lora_name for lr in call["loras"]}) == 2 for call in llm.calls)
    for key in trainer.policies.keys:
        served = trainer.backend.served(key)
        assert served.int_id != first[key].int_id and not first[key].path.exists()
        assert _served_equals_model(read_adapter(served.path), trainer.policies, key)
