"""The engine on the owned model gives what the project's transformers paths give: the sampler's decode
loop (greedy tokens identical, seeded sampling identical, log-probs within 1e-4) and the loss's
log-probs (shared-prompt and full-row paths, within 1e-4, gradients reaching the adapters), with two
adapters of different ranks mixed in one batch. A tiny random model in fp32; nothing is downloaded."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from llm_coop_envs.lm.engine import Engine, Sampling  # noqa: E402
from llm_coop_envs.lm.load import from_transformers  # noqa: E402
from tests.lm.test_owned_model import ADAPTERS, tiny_llama, with_adapters  # noqa: E402
from trainers.generation.decode import DecodeSettings, decode  # noqa: E402
from trainers.logprobs import completion_logprobs  # noqa: E402

TOLERANCE = 1e-4
PROMPTS = [[5, 9, 17, 33, 2, 8, 71], [40, 41, 42], [7, 99, 3, 12, 60]]
SLOTS = [0, 1, -1]  # each prompt's adapter: the first, the second, the base model
ROWS = [0, 0, 1, 1, 2, 2, 0]  # each sampled row's prompt


class _Tokenizer:
    pad_token_id, eos_token_id = 0, None


@pytest.fixture(scope="module")
def models():
    tuned = with_adapters(tiny_llama())
    return tuned, from_transformers(tuned)


def _peft_scope(tuned):
    """The sampler's adapter routing for transformers: each prompt's rows run under its adapter."""
    def scope(prompt_rows):
        slots = {SLOTS[i] for i in prompt_rows}
        if len(slots) != 1:
            raise AssertionError("the reference runs one adapter at a time")
        slot = slots.pop()
        if slot < 0:
            return tuned.disable_adapter()
        tuned.set_adapter(ADAPTERS[slot])
        return contextlib.nullcontext()
    return scope


def _reference_decode(tuned, temperature: float, seed: int, new_tokens: int = 6):
    """Old decode loop, one prompt (so one adapter) at a time, rows drawn as the engine draws them."""
    tokens, logprobs = {}, {}
    settings = DecodeSettings(max_new_tokens=new_tokens, temperature=temperature, top_p=0.9)
    for prompt in range(len(PROMPTS)):
        rows = [r for r, p in enumerate(ROWS) if p == prompt]
        torch.manual_seed(seed + prompt)
        out, lps = decode(tuned, [PROMPTS[prompt]], [0] * len(rows), settings, lambda _: _peft_scope(tuned)([prompt]))
        for row, t, lp in zip(rows, out, lps):
            tokens[row], logprobs[row] = t, lp
    return tokens, logprobs


def _engine_decode(owned, temperature: float, seed: int, packed: bool, new_tokens: int = 6):
    engine = Engine(owned, packed=packed)
    tokens, logprobs = {}, {}
    for prompt in range(len(PROMPTS)):
        rows = [r for r, p in enumerate(ROWS) if p == prompt]
        torch.manual_seed(seed + prompt)
        out, lps = engine.sample([PROMPTS[prompt]], [0] * len(rows),
                                 Sampling(max_new_tokens=new_tokens, temperature=temperature, top_p=0.9),
                                 adapters=[SLOTS[prompt]])
        for row, t, lp in zip(rows, out, lps):
            tokens[row], logprobs[row] = t, lp
    return tokens, logprobs


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_sample_matches_the_decode_loop(models, packed, temperature):
    tuned, owned = models
    want_tokens, want_logprobs = _reference_decode(tuned, temperature, seed=3)
    got_tokens, got_logprobs = _engine_decode(owned, temperature, seed=3, packed=packed)
    assert got_tokens == want_tokens
    for row in want_tokens:
        assert torch.allclose(torch.tensor(got_logprobs[row]), torch.tensor(want_logprobs[row]), atol=TOLERANCE)


def test_one_batch_of_mixed_adapters_gives_each_row_what_it_gets_alone(models):
    """All prompts, all adapters, one call: the same tokens as one prompt at a time (the draw of a row
    does not depend on its neighbours), greedy and sampled."""
    _, owned = models
    engine = Engine(owned)
    for temperature in (0.0, 0.8):
        settings = Sampling(max_new_tokens=6, temperature=temperature, top_p=0.9)
        torch.manual_seed(5)
        together, _ = engine.sample(PROMPTS, ROWS, settings, adapters=SLOTS)
        alone = {}
        for prompt in range(len(PROMPTS)):
            torch.manual_seed(5)
            out, _ = engine.sample([PROMPTS[prompt]], [0] * len(ROWS), settings, adapters=[SLOTS[prompt]])
            alone.update({row: out[row] for row, p in enumerate(ROWS) if p == prompt})
        assert together == [alone[row] for row in range(len(ROWS))]


def test_rows_end_at_end_tokens_and_when_the_caller_says_so(models):
    _, owned = models
    engine = Engine(owned)
    free, _ = engine.sample(PROMPTS, ROWS, Sampling(max_new_tokens=8))
    end = free[0][2]
    ended, _ = engine.sample(PROMPTS, ROWS, Sampling(max_new_tokens=8, eos_ids=frozenset({end})))
    for full, cut in zip(free, ended):
        assert cut == (full[: full.index(end) + 1] if end in full else full)
    stopped, _ = engine.sample(PROMPTS, ROWS, Sampling(max_new_tokens=8),
                               stopped=lambda running, tokens: [len(t) >= 3 and r % 2 == 0 for r, t in zip(running, tokens)])
    assert [len(t) for t in stopped] == [3 if r % 2 == 0 else 8 for r in range(len(ROWS))]
    assert all(full[: len(s)] == s for full, s in zip(free, stopped))


@pytest.mark.parametrize("shared", [True, False])
def test_score_matches_the_loss_log_probs_with_gradients(models, shared):
    """Shared prompts (a group's replies) and distinct ones, one adapter per call as the loss runs it."""
    tuned, owned = models
    engine = Engine(owned)
    completions = [[3, 4, 5, 6], [8], [9, 10, 11], [12, 13], [1, 2, 3, 4, 5], [6, 7]]
    for slot in (0, 1):
        prompts = [PROMPTS[0]] * 3 + [PROMPTS[1]] * 3 if shared else [PROMPTS[0], PROMPTS[1], PROMPTS[2], [4, 5],
                                                                        [6, 7, 8, 9], [1, 2, 3]]
        tuned.set_adapter(ADAPTERS[slot])
        want, want_mask = completion_logprobs(tuned, _Tokenizer(), prompts, completions, torch.device("cpu"))
        got, got_mask = engine.score(prompts, completions, adapters=[slot] * len(prompts))
        assert torch.equal(got_mask, want_mask)
        assert torch.allclose(got * got_mask, want * want_mask, atol=TOLERANCE)
        a, _ = next(linear for _, name, linear in owned.linears() if name == "q").adapter(slot)
        a.grad = None
        (got * got_mask).sum().backward()
        assert a.grad is not None and a.grad.abs().sum() > 0


def test_score_with_mixed_adapters_equals_each_adapter_alone(models):
    _, owned = models
    engine = Engine(owned)
    prompts = [PROMPTS[0], PROMPTS[0], PROMPTS[1], PROMPTS[1]]
    completions = [[3, 4, 5], [6, 7], [8, 9, 10, 11], [12]]
    slots = [0, 1, 1, -1]
    with torch.no_grad():
        together, mask = engine.score(prompts, completions, adapters=slots, temperature=0.7, top_p=0.9)
        for row, slot in enumerate(slots):
            alone, _ = engine.score([prompts[row]], [completions[row]], adapters=[slot], temperature=0.7, top_p=0.9)
            width = len(completions[row])
            assert torch.allclose(together[row, :width], alone[0, :width], atol=TOLERANCE)


def test_an_adapter_outside_the_seven_projections_keeps_the_model_on_transformers():
    """A LoRA on the output head (or any module the owned model has no adapter table for) is refused, so
    the sampler and the loss run such a model through transformers' forward instead of dropping it."""
    from llm_coop_envs.lm.load import unsupported

    tuned = peft.get_peft_model(tiny_llama(), peft.LoraConfig(r=4, target_modules=["q_proj", "lm_head"]))
    reason = unsupported(tuned)
    assert reason is not None and "lm_head" in reason
    with pytest.raises(ValueError, match="lm_head"):
        from_transformers(tuned)
    assert unsupported(peft.get_peft_model(tiny_llama(), peft.LoraConfig(r=4, target_modules=["q_proj"]))) is None


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_prefill_in_length_ordered_chunks_changes_no_token(models, monkeypatch, temperature):
    """Prompts prefilled one chunk at a time, in length order, and joined left-padded give the tokens and
    log-probs of one padded forward of all prompts."""
    from llm_coop_envs.lm import engine as engine_module

    _, owned = models
    engine = Engine(owned)
    settings = Sampling(max_new_tokens=6, temperature=temperature, top_p=0.9)

    def run():
        torch.manual_seed(0)
        return engine.sample(PROMPTS, ROWS, settings, adapters=SLOTS)

    monkeypatch.setattr(engine_module, "PREFILL_TOKENS", 10**6)  # one forward
    whole = run()
    monkeypatch.setattr(engine_module, "PREFILL_TOKENS", 1)  # one prompt per forward
    chunked = run()
    assert chunked[0] == whole[0]
    for mine, theirs in zip(chunked[1], whole[1]):
        assert torch.allclose(torch.tensor(mine), torch.tensor(theirs), atol=TOLERANCE)


def test_a_full_cache_refuses_more_positions(models):
    from llm_coop_envs.lm.model import KVCache

    _, owned = models
    cache = KVCache(owned.shape, 1, 4)
    with torch.no_grad():
        owned(torch.tensor([[1, 2, 3, 4]]), cache=cache)
        with pytest.raises(RuntimeError, match="KV cache full"):
            owned(torch.tensor([[5]]), cache=cache)


def test_without_onednn_packing_the_engine_samples_the_same_tokens(models, monkeypatch):
    """The private oneDNN operators are used only with torch inside its declared range and where they
    agree with ``F.linear``; otherwise the packed model multiplies plain weights: the same tokens."""
    from llm_coop_envs.lm import model as model_module

    _, owned = models
    settings = Sampling(max_new_tokens=6, temperature=0.8, top_p=0.9)
    torch.manual_seed(2)
    packed, _ = Engine(owned).sample(PROMPTS, ROWS, settings, adapters=SLOTS)
    model_module._onednn.cache_clear()
    monkeypatch.setattr(model_module, "in_tested_range", lambda dist: dist != "torch", raising=False)
    monkeypatch.setattr("llm_coop_envs.versions.in_tested_range", lambda dist: dist != "torch")
    try:
        assert not model_module._onednn()
        torch.manual_seed(2)
        plain, _ = Engine(owned).sample(PROMPTS, ROWS, settings, adapters=SLOTS)
    finally:
        model_module._onednn.cache_clear()
    assert plain == packed
