"""The transformers backend: batched mixed-adapter generation equals per-agent generation (greedy),
matches ``model.generate``, and the fallback (transformers' own forward, peft's mixed adapters) gives the
engine's tokens."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.trainers.conftest import tiny_config  # noqa: E402
from trainers.config import SamplingConfig  # noqa: E402
from trainers.generation.base import GenerationRequest  # noqa: E402
from trainers.generation.transformers_backend import TransformersBackend  # noqa: E402
from trainers.policy import build_policies  # noqa: E402

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=12)
OBSERVATIONS = {"helper": "def add(x, y): return", "main": "helper main agents cooperate and write code"}


def _policies(tmp_path, tiny_models, agents=("helper", "main")):
    policies = build_policies(agents, tiny_config(tmp_path), tiny_models)
    torch.manual_seed(1)
    with torch.no_grad():  # peft starts lora_B at zero: make the adapters differ from the base and each other
        for name, param in policies.slots[agents[0]].model.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.5)
    return policies


def _requests(sampling=GREEDY, n=2):
    return [GenerationRequest(agent, obs, n, sampling) for agent, obs in OBSERVATIONS.items()]


def test_batched_mixed_adapters_equal_per_agent_greedy(tmp_path, tiny_models):
    backend = TransformersBackend(_policies(tmp_path, tiny_models), dtype="float32")
    batched = backend.generate(_requests())
    per_agent = [backend.generate([request])[0] for request in _requests()]
    assert [[c.completion_ids for c in cs] for cs in batched] == [[c.completion_ids for c in cs] for cs in per_agent]
    helper, main = ([c.completion_ids for c in cs] for cs in batched)
    assert helper[0] == helper[1] and main[0] == main[1]  # greedy: the G samples of one prompt agree


def test_greedy_matches_transformers_generate(tmp_path, tiny_models):
    policies = _policies(tmp_path, tiny_models)
    backend = TransformersBackend(policies, dtype="float32")
    ours = backend.generate(_requests(n=1))
    for request, completions in zip(_requests(n=1), ours):
        slot = policies.activate(request.agent)
        prompt = torch.tensor([policies.prompt_ids(request.agent, request.observation)])
        with torch.no_grad():
            out = slot.model.generate(
                input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=GREEDY.max_new_tokens,
                do_sample=False, pad_token_id=slot.tokenizer.pad_token_id, eos_token_id=slot.tokenizer.eos_token_id,
            )
        expected = out[0, prompt.shape[1]:].tolist()
        eos = slot.tokenizer.eos_token_id
        expected = expected[: expected.index(eos) + 1] if eos in expected else expected
        assert list(completions[0].completion_ids) == expected


@pytest.mark.parametrize("peft_in_range", [True, False], ids=["peft private hooks", "public adapter_names="])
def test_the_fallback_gives_the_engine_tokens(tmp_path, tiny_models, monkeypatch, peft_in_range):
    """A model the owned module does not cover decodes through transformers' forward with peft's own
    mixed-adapter batch; it generates what the engine does, through peft's private hooks inside peft's
    declared range and its public forward keyword outside."""
    from trainers.generation import transformers_backend

    backend = TransformersBackend(_policies(tmp_path, tiny_models), dtype="float32")
    expected = [[c.completion_ids for c in cs] for cs in backend.generate(_requests())]
    monkeypatch.setattr(transformers_backend, "owned_model", lambda model: None)  # not covered (this test)
    monkeypatch.setattr(transformers_backend, "in_tested_range", lambda dist: peft_in_range or dist != "peft")
    model = backend.policies.slots["helper"].model
    ids = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 12]])
    names = [backend.policies.slots["main"].adapter, "__base__"]
    with torch.no_grad():
        reference = model(input_ids=ids, adapter_names=names).logits
        with transformers_backend._peft_adapter_names(model, names):
            assert ("forward" in model.__dict__) is not peft_in_range  # which path ran
            torch.testing.assert_close(model(input_ids=ids).logits, reference)
    assert "forward" not in model.__dict__
    assert [[c.completion_ids for c in cs] for cs in backend.generate(_requests())] == expected


def test_sampling_respects_lengths_and_min_new_tokens(tmp_path, tiny_models):
    backend = TransformersBackend(_policies(tmp_path, tiny_models), dtype="float32", min_new_tokens=6)
    sampling = SamplingConfig(temperature=1.0, top_p=0.9, max_new_tokens=6)
    torch.manual_seed(0)
    for completions in backend.generate(_requests(sampling, n=3)):
        for completion in completions:
            assert len(completion.completion_ids) == 6 and completion.truncated


def test_shared_prompt_logprobs_equal_full_rows(tmp_path, tiny_models):
    """Prefilling each distinct prompt once gives the same log-probs and gradients as full rows."""
    from trainers.logprobs import _logprobs_full_rows, completion_logprobs

    policies = _policies(tmp_path, tiny_models)
    slot = policies.activate("main")
    a, b = (list(policies.prompt_ids(agent, obs)) for agent, obs in OBSERVATIONS.items())
    prompts, completions = [a, a, b, a], [[5, 6, 7], [8], [9, 10, 11, 12], [13, 14]]
    results = []
    for compute in (completion_logprobs, _logprobs_full_rows):
        slot.model.zero_grad(set_to_none=True)
        logps, mask = compute(slot.model, slot.tokenizer, prompts, completions, policies.device)
        (logps * mask).sum().backward()
        grads = {n: p.grad.clone() for n, p in slot.model.named_parameters() if p.grad is not None}
        results.append((logps * mask, mask, grads))
    (ours, our_mask, our_grads), (full, full_mask, full_grads) = results
    torch.testing.assert_close(our_mask, full_mask)
    torch.testing.assert_close(ours, full, rtol=1e-5, atol=1e-5)
    assert our_grads.keys() == full_grads.keys() and our_grads
    for name in full_grads:
        torch.testing.assert_close(our_grads[name], full_grads[name], rtol=1e-4, atol=1e-5)
