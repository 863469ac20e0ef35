"""The fallback decode loop (transformers' forward): dropping finished rows from the batch changes no
token or log-prob, greedy and seeded sampling, with two agents' adapters mixed in one batch. The draw
(the engine's, shared by both loops) follows the sampling distribution."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.trainers.conftest import tiny_config  # noqa: E402
from trainers.generation import decode as decode_module  # noqa: E402
from llm_coop_envs.lm.engine import pick  # noqa: E402
from trainers.generation.decode import DecodeSettings, decode  # noqa: E402
from trainers.generation.transformers_backend import _adapter_scope  # noqa: E402
from trainers.policy import build_policies  # noqa: E402

OBSERVATIONS = {"helper": "def add(x, y): return", "main": "helper main agents cooperate and write code"}


@pytest.fixture()
def batch(tmp_path, tiny_models):
    """A model with two different adapters, both agents' prompts (different lengths), 3 rows each, and
    end tokens common enough that rows finish at different steps."""
    policies = build_policies(("helper", "main"), tiny_config(tmp_path), tiny_models)
    torch.manual_seed(1)
    model = policies.slots["helper"].model
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.5)
    prompts = [policies.prompt_ids(agent, obs) for agent, obs in OBSERVATIONS.items()]
    adapters = [policies.slots[agent].adapter for agent in OBSERVATIONS]
    greedy = _decode(model, prompts, adapters, temperature=0.0, compact=False, eos_ids=frozenset())[0]
    common = [t for row in greedy for t in row[2:5]]  # tokens each greedy row emits after a few steps
    return model, prompts, adapters, frozenset(common)


def _decode(model, prompts, adapters, compact, temperature, eos_ids, top_p=1.0, seed=0):
    settings = DecodeSettings(max_new_tokens=10, temperature=temperature, top_p=top_p, eos_ids=eos_ids)
    torch.manual_seed(seed)
    return decode(model, prompts, [0, 0, 0, 1, 1, 1], settings,
                  lambda rows: _adapter_scope(model, [adapters[i] for i in rows]), compact=compact)


@pytest.mark.parametrize("sampling", [{"temperature": 0.0}, {"temperature": 1.0}, {"temperature": 0.8, "top_p": 0.9}])
def test_dropping_finished_rows_changes_no_token(batch, monkeypatch, sampling):
    model, prompts, adapters, eos_ids = batch
    drops = []
    # drop at every end, counting the drops
    monkeypatch.setattr(decode_module, "worth_compacting", lambda finished: bool(finished.any()) and not drops.append(1))
    mixed_lengths = 0
    for seed in (0, 1, 2, 3):
        kept_tokens, kept_logprobs = _decode(model, prompts, adapters, False, eos_ids=eos_ids, seed=seed, **sampling)
        tokens, logprobs = _decode(model, prompts, adapters, True, eos_ids=eos_ids, seed=seed, **sampling)
        assert tokens == kept_tokens
        for ours, theirs in zip(logprobs, kept_logprobs):
            torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-5, atol=1e-5)
        mixed_lengths += len({len(row) for row in tokens}) > 1
    assert mixed_lengths and drops  # rows did finish at different steps and left the batch early


@pytest.mark.parametrize("top_p", [1.0, 0.8])
def test_sampler_draws_from_the_sampling_distribution(top_p):
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0, 0.0])
    settings = DecodeSettings(max_new_tokens=1, temperature=0.7, top_p=top_p)
    rows = 40_000
    torch.manual_seed(0)
    chosen, logprobs = pick(logits.expand(rows, -1).clone(), settings, rows, range(rows))
    expected = torch.softmax(logits / 0.7, -1)
    if top_p < 1:
        order = expected.argsort(descending=True)
        outside = order[(expected[order].cumsum(0) - expected[order]) >= top_p]
        expected[outside] = 0
        expected /= expected.sum()
    frequencies = torch.bincount(chosen, minlength=len(logits)).float() / rows
    torch.testing.assert_close(frequencies, expected, rtol=0, atol=0.01)  # 4+ standard errors
    torch.testing.assert_close(logprobs.exp(), expected[chosen])


@pytest.mark.parametrize("draw", [0.0, 1.0 - 2.0**-53])
def test_sampler_never_picks_a_token_outside_the_nucleus_at_the_extreme_draws(monkeypatch, draw):
    """The first and the last token with p > 0 (a forbidden token, e.g. end-of-sequence before
    ``min_new_tokens``, has logit −inf; top-p 0.7 keeps tokens 1 and 2)."""
    inf = float("inf")
    logits = torch.tensor([[-inf, 2.0, 1.0, -inf, 0.5, -inf]])
    monkeypatch.setattr(torch, "rand", lambda *shape, **kw: torch.full(shape, draw, dtype=kw.get("dtype")))
    for top_p in (1.0, 0.7):
        chosen, logprobs = pick(logits, DecodeSettings(max_new_tokens=1, temperature=1.0, top_p=top_p), 1, [0])
        assert torch.isfinite(logprobs).all()
        assert int(chosen) == (1 if draw == 0.0 else (4 if top_p == 1.0 else 2))


def test_seeded_sampling_is_reproducible(batch):
    model, prompts, adapters, eos_ids = batch
    first = _decode(model, prompts, adapters, True, temperature=0.9, top_p=0.95, eos_ids=eos_ids, seed=7)
    again = _decode(model, prompts, adapters, True, temperature=0.9, top_p=0.95, eos_ids=eos_ids, seed=7)
    other = _decode(model, prompts, adapters, True, temperature=0.9, top_p=0.95, eos_ids=eos_ids, seed=8)
    assert first == again
    assert first[0] != other[0]
