"""The vLLM backend in server mode, against a local HTTP stand-in of ``vllm serve --enable-lora``:
adapters are loaded at start, a new version is loaded and the old one unloaded after each update, one
completions request per agent names that agent's adapter, and a silent, refusing or garbled server
gives a clear VLLMServerError."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.trainers.conftest import tiny_config  # noqa: E402
from tests.trainers.test_vllm_backend import OBSERVATIONS, SAMPLING, _perturb, _policies, _requests  # noqa: E402
from tests.trainers.vllm_standins import StandInServer, standin_logprob  # noqa: E402
from trainers.generation import backend_from_config  # noqa: E402
from trainers.generation.vllm_backend import VLLMBackend  # noqa: E402
from trainers.generation.vllm_server import VLLMServerError  # noqa: E402

LOAD, UNLOAD, COMPLETE = "/v1/load_lora_adapter", "/v1/unload_lora_adapter", "/v1/completions"


@pytest.fixture()
def server():
    with StandInServer() as running:
        yield running


def _backend(tmp_path, tiny_models, server, **options):
    options.setdefault("timeout_s", 30.0)
    return VLLMBackend(_policies(tmp_path, tiny_models), mode="server", url=server.url,
                       adapter_dir=str(tmp_path / "adapters"), **options)


def test_start_loads_one_adapter_per_agent_and_completions_name_it(tmp_path, tiny_models, server):
    backend = _backend(tmp_path, tiny_models, server)
    served = [backend.served(agent) for agent in ("helper", "main")]
    assert [body["lora_name"] for body in server.calls(LOAD)] == [adapter.name for adapter in served]
    assert [body["lora_path"] for body in server.calls(LOAD)] == [str(adapter.path) for adapter in served]
    out = backend.generate(_requests(n=3))
    bodies = sorted(server.calls(COMPLETE), key=lambda body: body["model"] != backend.served("helper").name)
    for agent, body in zip(OBSERVATIONS, bodies):
        assert body["model"] == backend.served(agent).name
        assert tuple(body["prompt"]) == backend.policies.prompt_ids(agent, OBSERVATIONS[agent])
        assert (body["n"], body["temperature"], body["top_p"], body["max_tokens"]) == (3, 0.7, 0.9, 6)
        assert body["stop"] == ["\n\n"] and body["logprobs"] == 0 and body["return_tokens_as_token_ids"] is True
    for completions in out:
        assert len(completions) == 3
        for completion in completions:
            assert completion.text == " ".join(map(str, completion.completion_ids))
            assert completion.logprobs == tuple(standin_logprob(k) for k in range(len(completion.completion_ids)))
            assert completion.truncated == (len(completion.completion_ids) == SAMPLING.max_new_tokens)
    assert out[0][0].completion_ids != out[1][0].completion_ids


def test_update_loads_new_adapters_then_unloads_the_old_ones(tmp_path, tiny_models, server):
    backend = _backend(tmp_path, tiny_models, server)
    before = backend.generate(_requests())
    old = {agent: backend.served(agent) for agent in OBSERVATIONS}
    _perturb(backend.policies, seed=2)
    backend.sync_weights()
    new = {agent: backend.served(agent) for agent in OBSERVATIONS}
    assert [b["lora_name"] for b in server.calls(LOAD)[2:]] == [new["helper"].name, new["main"].name]
    assert [b["lora_name"] for b in server.calls(UNLOAD)] == [old["helper"].name, old["main"].name]
    assert set(server.adapters) == {a.name for a in new.values()}
    assert all(not a.path.exists() for a in old.values()) and all(a.path.is_dir() for a in new.values())
    after = backend.generate(_requests())
    assert {b["model"] for b in server.calls(COMPLETE)[2:]} == {a.name for a in new.values()}
    assert [[c.completion_ids for c in cs] for cs in before] != [[c.completion_ids for c in cs] for cs in after]
    backend.close()
    assert server.adapters == {} and not backend.adapter_folder.exists()


def test_backend_from_config_reaches_the_server(tmp_path, tiny_models, server):
    cfg = tiny_config(tmp_path, backend="vllm", vllm_mode="server", vllm_url=server.url,
                      vllm_adapter_dir=str(tmp_path / "shared"))
    backend = backend_from_config(cfg, _policies(tmp_path, tiny_models))
    assert backend.adapter_folder.parent == (tmp_path / "shared").resolve()
    assert len(server.adapters) == 2


def test_a_silent_server_times_out_with_a_clear_error(tmp_path, tiny_models, server):
    backend = _backend(tmp_path, tiny_models, server, timeout_s=0.5)
    server.behaviour = "hang"
    with pytest.raises(VLLMServerError, match="no answer within 0.5 s"):
        backend.generate(_requests())


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [("not_json", "invalid JSON"), ("no_choices", "Malformed completion"), ("bad_tokens", "token_id:<id>")],
)
def test_malformed_completions_are_clear_errors(tmp_path, tiny_models, server, behaviour, message):
    backend = _backend(tmp_path, tiny_models, server)
    server.behaviour = behaviour
    with pytest.raises(VLLMServerError, match=message):
        backend.generate(_requests())


def test_token_ids_outside_the_vocabulary_are_refused(tmp_path, tiny_models, server):
    backend = _backend(tmp_path, tiny_models, server)
    server.behaviour = "out_of_vocabulary"
    with pytest.raises(RuntimeError, match="outside helper's vocabulary"):
        backend.generate(_requests())


def test_server_without_runtime_lora_updating_says_how_to_enable_it(tmp_path, tiny_models, server):
    server.behaviour = "no_runtime_lora"
    with pytest.raises(VLLMServerError, match="VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"):
        _backend(tmp_path, tiny_models, server)


def test_unreachable_server_is_a_clear_error(tmp_path, tiny_models):
    with StandInServer() as stopped:
        url = stopped.url  # a port that nothing listens on once the server is closed
    with pytest.raises(VLLMServerError, match="Cannot reach the vLLM server"):
        VLLMBackend(_policies(tmp_path, tiny_models), mode="server", url=url, timeout_s=5.0)
