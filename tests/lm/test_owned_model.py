"""The owned Llama module computes what transformers (and peft) compute: tiny random Llama and Qwen2
models in fp32, no download. Log-probs, logits and gradients agree within 1e-4."""

import contextlib

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM  # noqa: E402

from llm_coop_envs.lm.load import from_transformers, owned_model, peft_state_dict, unsupported  # noqa: E402
from llm_coop_envs.lm.model import KVCache  # noqa: E402

TOLERANCE = 1e-4
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
ADAPTERS = ("first", "second")


def tiny_llama(**fields) -> LlamaForCausalLM:
    torch.manual_seed(0)
    settings = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                    rope_theta=10000.0, tie_word_embeddings=True, bos_token_id=None, eos_token_id=None)
    return LlamaForCausalLM(LlamaConfig(**{**settings, **fields})).eval()


def tiny_qwen2(**fields) -> Qwen2ForCausalLM:
    """Qwen2 differs from Llama by q/k/v biases (drawn at random here: a fresh model's are zero)."""
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, tie_word_embeddings=True, **fields)).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("proj.bias"):
                parameter.normal_(std=0.5)
    return model


def with_adapters(model: LlamaForCausalLM, dropout: float = 0.0):
    """Two LoRA adapters of ranks 4 and 8 on all seven projections; B drawn at random (peft starts it at
    zero, where an adapter would change nothing)."""
    tuned = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=7, lora_dropout=dropout, target_modules=TARGETS),
                                adapter_name=ADAPTERS[0])
    tuned.add_adapter(ADAPTERS[1], peft.LoraConfig(r=8, lora_alpha=20, lora_dropout=dropout, target_modules=TARGETS))
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in tuned.modules():
            if hasattr(module, "lora_B"):
                for b in module.lora_B.values():
                    b.weight.copy_(torch.randn(b.weight.shape, generator=generator) * 0.2)
    return tuned.eval()


def left_padded(lengths, seed: int = 2):
    """Random token rows of ``lengths``, left-padded with token 0: (ids, mask, positions)."""
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.zeros(len(lengths), width, dtype=torch.long)
    mask = torch.zeros(len(lengths), width, dtype=torch.long)
    for row, length in enumerate(lengths):
        ids[row, width - length:] = torch.randint(1, 128, (length,), generator=generator)
        mask[row, width - length:] = 1
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def reference_log_probs(model, ids, mask, positions):
    """transformers' log-probs, called as the project calls it (positions counted from the mask)."""
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=ids, attention_mask=mask, position_ids=positions).logits, -1)


def error_on_tokens(ours, theirs, mask) -> float:
    """Largest difference at the positions that hold tokens (padding positions predict nothing)."""
    return float((ours - theirs).abs()[mask.bool()].max())


@pytest.mark.parametrize("fields", [
    {},
    {"tie_word_embeddings": False},
    {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 64}},
    "qwen2",
], ids=["tied", "untied", "llama3-rope", "qwen2"])
def test_log_probs_match_transformers_on_a_left_padded_batch(fields):
    model = tiny_qwen2() if fields == "qwen2" else tiny_llama(**fields)
    if "rope_scaling" in fields and fields != "qwen2":
        assert model.model.rotary_emb.rope_type == "llama3"  # the variant under test is really in use
    owned = from_transformers(model)
    ids, mask, positions = left_padded([9, 4, 7])
    with torch.no_grad():
        ours = torch.log_softmax(owned(ids, mask), -1)
    assert error_on_tokens(ours, reference_log_probs(model, ids, mask, positions), mask) < TOLERANCE


@pytest.mark.parametrize("build", [tiny_llama, tiny_qwen2], ids=["llama", "qwen2"])
def test_rows_with_different_adapters_match_peft_with_each_adapter_active(build):
    tuned = with_adapters(build())
    owned = from_transformers(tuned)
    assert owned.adapter_names == list(ADAPTERS)
    ids, mask, positions = left_padded([9, 4, 7, 6])
    slots = [0, 1, -1, 1]
    with torch.no_grad():
        ours = torch.log_softmax(owned(ids, mask, adapters=slots), -1)
    references = {}
    for slot, name in enumerate(ADAPTERS):
        tuned.set_adapter(name)
        references[slot] = reference_log_probs(tuned, ids, mask, positions)
    with tuned.disable_adapter():
        references[-1] = reference_log_probs(tuned, ids, mask, positions)
    assert (references[0] - references[1]).abs().max() > 0.1  # the adapters do change the output
    for row, slot in enumerate(slots):
        assert error_on_tokens(ours[row], references[slot][row], mask[row]) < TOLERANCE, (row, slot)


@pytest.mark.parametrize("capacity", [True, False], ids=["preallocated", "growing"])
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "packed"])
def test_prefill_then_decode_gives_the_full_forward_logits(capacity, packed):
    """Each distinct (prompt, adapter) pair is prefilled once, its cache rows copied to its samples,
    then every sample decodes its own tokens one at a time: the decode loop of the sampler."""
    owned = from_transformers(with_adapters(tiny_llama()))
    prompts, prompt_mask, _ = left_padded([6, 6, 3, 3], seed=3)
    prompts[1], prompt_mask[1] = prompts[0], prompt_mask[0]  # one prompt read by two adapters
    prompts[3], prompt_mask[3] = prompts[2], prompt_mask[2]
    prefill_slots = torch.tensor([0, 1, 1, -1])
    samples = torch.tensor([0, 0, 1, 2, 3])  # the prefilled row each sample continues
    steps = 4
    new = torch.randint(1, 128, (len(samples), steps), generator=torch.Generator().manual_seed(4))
    width = prompts.shape[1]
    with torch.no_grad(), owned.packed() if packed else contextlib.nullcontext():
        cache = KVCache(owned.shape, len(prefill_slots), width + steps if capacity else None)
        last = owned(prompts, prompt_mask, cache=cache, adapters=prefill_slots, keep=1)[:, -1]
        cache.select(samples)
        slots, mask = prefill_slots[samples], prompt_mask[samples]
        stepped = [last[samples]]
        for step in range(steps):
            mask = torch.cat([mask, torch.ones(len(samples), 1, dtype=mask.dtype)], dim=1)
            stepped.append(owned(new[:, step:step + 1], mask, cache=cache, adapters=slots)[:, -1])
        assert cache.length == width + steps
    with torch.no_grad():  # the reference: every sample's whole sequence in one plain forward
        full = owned(torch.cat([prompts[samples], new], 1), mask, adapters=slots)[:, width - 1:]
    assert float((torch.stack(stepped, 1) - full).abs().max()) < TOLERANCE


@pytest.mark.parametrize("build", [tiny_llama, tiny_qwen2], ids=["llama", "qwen2"])
def test_packed_forward_matches_the_plain_one(build):
    owned = from_transformers(with_adapters(build()))
    ids, mask, _ = left_padded([9, 4, 7])
    with torch.no_grad():
        plain = owned(ids, mask, adapters=[1, -1, 0])
        with owned.packed():
            packed = owned(ids, mask, adapters=[1, -1, 0])
    assert owned.blocks[0].packed is None  # the packed copies are gone after the block
    assert error_on_tokens(packed, plain, mask) < TOLERANCE
    with owned.packed():  # a forward with grad runs on the live weights: its adapters get gradients
        owned(ids, mask, adapters=[1, -1, 0]).sum().backward()
    assert owned.blocks[0].proj["q"].adapter(0)[1].grad is not None


def test_adapters_on_different_projections_match_peft():
    """One adapter on q and v only, another on o, up and down only: each fused product carries the
    adapters that reach its projections, placed at their outputs."""
    torch.manual_seed(0)
    tuned = peft.get_peft_model(tiny_llama(), peft.LoraConfig(r=2, lora_alpha=3, target_modules=["q_proj", "v_proj"]),
                                adapter_name=ADAPTERS[0])
    tuned.add_adapter(ADAPTERS[1], peft.LoraConfig(r=6, lora_alpha=5, target_modules=["o_proj", "up_proj", "down_proj"]))
    with torch.no_grad():
        for module in tuned.modules():
            for b in getattr(module, "lora_B", {}).values():
                b.weight.normal_(std=0.3)
    owned = from_transformers(tuned.eval())
    ids, mask, positions = left_padded([8, 5])
    with tuned.disable_adapter():
        base = reference_log_probs(tuned, ids, mask, positions)
    for slot, name in enumerate(ADAPTERS):
        tuned.set_adapter(name)
        reference = reference_log_probs(tuned, ids, mask, positions)
        assert error_on_tokens(base, reference, mask) > 0.01  # the adapter matters
        with torch.no_grad():
            plain = torch.log_softmax(owned(ids, mask, adapters=[slot, slot]), -1)
            with owned.packed():
                packed = torch.log_softmax(owned(ids, mask, adapters=[slot, slot]), -1)
        assert error_on_tokens(plain, reference, mask) < TOLERANCE
        assert error_on_tokens(packed, reference, mask) < TOLERANCE


def test_gradients_reach_the_adapters_and_match_peft():
    """A mixed batch's loss gives each adapter the gradient peft gives it (copied weights, so the two
    models' gradients are kept apart), and none to the frozen base weights."""
    tuned = with_adapters(tiny_llama())
    owned = from_transformers(tuned, share=False)
    for _, _, linear in owned.linears():  # peft leaves only its active adapter trainable; train both
        for weight in [*linear.lora_a, *linear.lora_b]:
            weight.requires_grad_(True)
    ids, mask, positions = left_padded([9, 4, 7])
    slots = [0, 1, 1]
    log_probs = torch.log_softmax(owned(ids, mask, adapters=slots)[:, :-1], -1)
    picked = log_probs.gather(-1, ids[:, 1:, None])[..., 0]
    scored = mask[:, :-1] * mask[:, 1:]  # a padding position predicts nothing, not even the first token
    (picked * scored).sum().backward()
    for slot, name in enumerate(ADAPTERS):
        tuned.set_adapter(name)
        rows = torch.tensor([row for row, s in enumerate(slots) if s == slot])
        logits = tuned(input_ids=ids[rows], attention_mask=mask[rows], position_ids=positions[rows]).logits
        picked = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[rows, 1:, None])[..., 0]
        (picked * scored[rows]).sum().backward()
    for i, short, linear in owned.linears():
        assert linear.weight.grad is None
        for slot, name in enumerate(ADAPTERS):
            ours = linear.adapter(slot)
            theirs = tuned.get_submodule(_peft_path(i, short))
            for mine, reference in zip(ours, (theirs.lora_A[name].weight, theirs.lora_B[name].weight)):
                assert mine.grad is not None and mine.grad.abs().max() > 0
                assert torch.allclose(mine.grad, reference.grad, atol=TOLERANCE, rtol=TOLERANCE), (i, short, name)


def test_shared_parameters_are_peft_s_own():
    """By default the owned model holds the transformers/peft parameters themselves: what it trains is
    what peft saves."""
    tuned = with_adapters(tiny_llama())
    owned = from_transformers(tuned)
    q = tuned.get_submodule(_peft_path(0, "q"))
    assert owned.blocks[0].proj["q"].adapter(1)[0] is q.lora_A[ADAPTERS[1]].weight
    assert owned.blocks[0].proj["q"].weight is q.base_layer.weight
    assert owned.embed is tuned.get_base_model().model.embed_tokens.weight


def test_the_kept_owned_model_follows_its_transformers_model():
    """One owned model per transformers model, kept between calls: weights trained in place reach it as they
    are (shared), and an adapter added or deleted builds it anew."""
    tuned = with_adapters(tiny_llama())
    ids, mask, positions = left_padded([5, 7])
    first = owned_model(tuned)
    assert owned_model(tuned) is first
    with torch.no_grad():
        tuned.get_submodule(_peft_path(1, "down")).lora_B[ADAPTERS[0]].weight.mul_(3.0)
        tuned.set_adapter(ADAPTERS[0])
        expected = reference_log_probs(tuned, ids, mask, positions)
        got = torch.log_softmax(owned_model(tuned)(ids, mask, adapters=[0, 0]), -1)
    assert owned_model(tuned) is first and error_on_tokens(got, expected, mask) < TOLERANCE
    tuned.add_adapter("third", peft.LoraConfig(r=2, lora_alpha=2, target_modules=["q_proj"]))
    grown = owned_model(tuned)
    assert grown is not first and grown.adapter_names == [*ADAPTERS, "third"]
    tuned.delete_adapter("third")
    assert owned_model(tuned).adapter_names == list(ADAPTERS)
    assert owned_model(tiny_llama()) is not owned_model(tuned)
    assert owned_model(tiny_llama(hidden_act="gelu")) is None


def test_gradients_through_a_shared_prompt_cache_equal_full_rows():
    """The loss can run a prompt once and its replies after its cache (a growing cache, with grad)."""
    owned = from_transformers(with_adapters(tiny_llama()), share=False)
    prompt, prompt_mask, _ = left_padded([5, 3], seed=5)
    replies = torch.randint(1, 128, (4, 3), generator=torch.Generator().manual_seed(6))
    samples, slots = torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 1, 0])

    def loss(log_probs, targets):
        return log_probs.gather(-1, targets[..., None]).sum()

    full_ids = torch.cat([prompt[samples], replies], 1)
    full_mask = torch.cat([prompt_mask[samples], torch.ones_like(replies)], 1)
    width = prompt.shape[1]
    full = torch.log_softmax(owned(full_ids, full_mask, adapters=slots)[:, width - 1:-1], -1)
    loss(full, replies).backward()
    expected = [p.grad.clone() for p in owned.parameters() if p.grad is not None]
    owned.zero_grad()
    # Each prompt runs once per adapter that reads it (rows 0-3: prompt 0 and 1 under adapters 0 and 1).
    prefix_rows, prefix_slots = torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1])
    cache = KVCache(owned.shape, 4)
    last = owned(prompt[prefix_rows], prompt_mask[prefix_rows], cache=cache, adapters=prefix_slots, keep=1)
    which = torch.tensor([0, 1, 3, 2])  # the prefix row of each sample's (prompt, adapter)
    cache.select(which)
    rest = owned(replies[:, :-1], full_mask[:, :-1], cache=cache, adapters=slots)
    shared = torch.log_softmax(torch.cat([last[which], rest], 1), -1)
    assert float((shared - full).detach().abs().max()) < TOLERANCE
    loss(shared, replies).backward()
    got = [p.grad for p in owned.parameters() if p.grad is not None]
    assert len(got) == len(expected) > 0
    assert all(torch.allclose(g, e, atol=TOLERANCE, rtol=TOLERANCE) for g, e in zip(got, expected))


def test_adapter_weights_go_back_to_peft_under_peft_s_names():
    tuned = with_adapters(tiny_llama())
    owned = from_transformers(tuned, share=False)
    with torch.no_grad():
        for _, _, linear in owned.linears():
            for b in linear.lora_b:
                b.mul_(-1.5)  # as if trained
    peft.set_peft_model_state_dict(tuned, peft_state_dict(owned, ADAPTERS[1]), adapter_name=ADAPTERS[1])
    tuned.set_adapter(ADAPTERS[1])
    ids, mask, positions = left_padded([6, 4])
    with torch.no_grad():
        ours = torch.log_softmax(owned(ids, mask, adapters=[1, 1]), -1)
    assert error_on_tokens(ours, reference_log_probs(tuned, ids, mask, positions), mask) < TOLERANCE


def test_lora_dropout_touches_only_the_adapter_rows_in_training_mode():
    owned = from_transformers(with_adapters(tiny_llama(), dropout=0.5))
    ids, mask, _ = left_padded([5, 5])
    with torch.no_grad():
        evaluated = owned(ids, mask, adapters=[0, -1])
        owned.train()
        trained = owned(ids, mask, adapters=[0, -1])
        owned.eval()
    assert (trained[0] - evaluated[0]).abs().max() > 1e-3
    assert (trained[1] - evaluated[1]).abs().max() < TOLERANCE


def test_other_models_are_refused_with_a_reason():
    assert unsupported(tiny_llama()) is None
    biased = tiny_llama(attention_bias=True)
    assert "bias" in unsupported(biased)
    with pytest.raises(ValueError, match="not a model the owned module covers"):
        from_transformers(biased)
    dora = peft.get_peft_model(tiny_llama(), peft.LoraConfig(r=4, target_modules=TARGETS, use_dora=True))
    assert "not plain LoRA" in unsupported(dora)
    assert unsupported(tiny_qwen2()) is None
    assert "sliding" in unsupported(tiny_qwen2(use_sliding_window=True, sliding_window=4, max_window_layers=1))


def _peft_path(layer: int, short: str) -> str:
    group = "self_attn" if short in ("q", "k", "v", "o") else "mlp"
    return f"base_model.model.model.layers.{layer}.{group}.{short}_proj"
