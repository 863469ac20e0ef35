"""The lean Llama decode step is transformers' forward in fewer operators: the same logits and KV
cache for rows that mix adapters (and the base model), after rows leave the batch, with LoRA on every
projection and adapters of different ranks; the decode loop gives the same tokens with it as without;
and anything it was not checked against decodes through the model's forward."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
peft = pytest.importorskip("peft")

from tests.trainers.conftest import build_model  # noqa: E402
from trainers.generation import decode as decode_module  # noqa: E402
from trainers.generation.decode import DecodeSettings, _prefill, decode  # noqa: E402
from trainers.generation.llama_step import LlamaDecodeStep  # noqa: E402
from trainers.generation.packed_linear import packing_works  # noqa: E402
from trainers.generation.transformers_backend import _adapter_scope  # noqa: E402
from llm_coop_envs.cache_api import passing  # noqa: E402

pytestmark = pytest.mark.skipif(not packing_works(), reason="this torch build has no oneDNN linear")

EVERY_PROJECTION = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
PROMPTS = [[5, 9, 14, 22, 7], [3, 40, 41], [60, 61, 62, 63, 64, 65, 66]]


def _with_adapters(tokenizer, targets=("q_proj", "k_proj", "v_proj", "o_proj")):
    """Two adapters ("first" rank 4, "second" rank 2) on ``targets``, both with non-zero B."""
    model = peft.get_peft_model(build_model(tokenizer), peft.LoraConfig(r=4, lora_alpha=8, target_modules=list(targets)),
                                adapter_name="first")
    model.add_adapter("second", peft.LoraConfig(r=2, lora_alpha=3, target_modules=list(targets)))
    torch.manual_seed(3)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_" in name:
                param.normal_(0.0, 0.3)
    return model.eval()


def _prompt_cache(model, adapters_of_prompts, rows):
    scope = lambda prompt_rows: _adapter_scope(model, [adapters_of_prompts[i] for i in prompt_rows])  # noqa: E731
    with torch.no_grad():
        return _prefill(model, PROMPTS, 0, scope, torch.tensor(rows), 4)


def _step_inputs(rows, cache_length, step=0):
    width = max(len(p) for p in PROMPTS)
    mask = torch.tensor([[0] * (width - len(PROMPTS[r])) + [1] * (len(PROMPTS[r]) + step + 1) for r in rows])
    positions = torch.tensor([[len(PROMPTS[r]) + step] for r in rows])
    tokens = torch.tensor([[11 + 7 * i] for i in range(len(rows))])
    assert mask.shape[1] == cache_length + 1
    return tokens, mask, positions


def _reference_step(model, row_adapters, tokens, mask, positions, cache):
    with torch.no_grad(), _adapter_scope(model, row_adapters):
        out = model(input_ids=tokens, attention_mask=mask, position_ids=positions, use_cache=True, **passing(cache))
    return out.logits[:, -1].float()


@pytest.mark.parametrize("targets", [("q_proj", "k_proj", "v_proj", "o_proj"), EVERY_PROJECTION, ("v_proj", "down_proj")])
def test_logits_and_cache_equal_transformers_forward_with_mixed_adapters(tokenizer, targets):
    model = _with_adapters(tokenizer, targets)
    assert LlamaDecodeStep.supports(model)
    prompt_adapters = ["first", "second", None]
    rows = [0, 1, 2, 0, 1]
    row_adapters = [prompt_adapters[r] for r in rows]
    ours_cache, _ = _prompt_cache(model, prompt_adapters, rows)
    their_cache, _ = _prompt_cache(model, prompt_adapters, rows)
    step = LlamaDecodeStep(model, row_adapters)
    for index in range(2):
        inputs = _step_inputs(rows, ours_cache.get_seq_length(), index)
        ours = step(*inputs, ours_cache)
        theirs = _reference_step(model, row_adapters, *inputs, their_cache)
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
        for mine, other in zip(ours_cache.layers, their_cache.layers):
            torch.testing.assert_close(mine.keys, other.keys, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(mine.values, other.values, rtol=1e-5, atol=1e-5)
    # the adapters matter: without them the logits differ
    base = _reference_step(model, [None] * len(rows), *_step_inputs(rows, their_cache.get_seq_length(), 2), their_cache)
    assert not torch.allclose(base[[0, 1]], step(*_step_inputs(rows, ours_cache.get_seq_length(), 2), ours_cache)[[0, 1]], atol=1e-4)


def test_rows_that_leave_the_batch_take_their_adapters_with_them(tokenizer):
    model = _with_adapters(tokenizer)
    prompt_adapters = ["first", "second", None]
    rows = [0, 1, 2, 1]
    ours_cache, _ = _prompt_cache(model, prompt_adapters, rows)
    their_cache, _ = _prompt_cache(model, prompt_adapters, rows)
    step = LlamaDecodeStep(model, [prompt_adapters[r] for r in rows])
    keep = torch.tensor([1, 3])  # both "second" rows stay
    ours_cache.keep_rows(keep)
    their_cache.keep_rows(keep)
    step.keep_rows(keep)
    kept = [rows[i] for i in keep.tolist()]
    inputs = _step_inputs(kept, ours_cache.get_seq_length())
    torch.testing.assert_close(step(*inputs, ours_cache),
                               _reference_step(model, ["second", "second"], *inputs, their_cache), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sampling", [{"temperature": 0.0}, {"temperature": 1.0, "top_p": 0.9}])
def test_decode_gives_the_same_tokens_with_the_lean_step(tokenizer, monkeypatch, sampling):
    model = _with_adapters(tokenizer)
    adapters = ["first", "second", None]
    rows = [0, 0, 1, 1, 2, 2]
    monkeypatch.setattr(decode_module, "worth_compacting", lambda finished: bool(finished.any()))
    drops = []
    keep_rows = LlamaDecodeStep.keep_rows
    monkeypatch.setattr(LlamaDecodeStep, "keep_rows", lambda self, kept: drops.append(len(kept)) or keep_rows(self, kept))
    torch.manual_seed(5)
    plain = decode(model, PROMPTS, rows, DecodeSettings(max_new_tokens=6, **sampling),
                   lambda r: _adapter_scope(model, [adapters[i] for i in r]))[0]
    ends = frozenset(row[3] for row in plain[::2])  # tokens that end some rows after a few steps
    settings = DecodeSettings(max_new_tokens=12, eos_ids=ends, **sampling)

    def run(fast):
        torch.manual_seed(5)
        return decode(model, PROMPTS, rows, settings, lambda r: _adapter_scope(model, [adapters[i] for i in r]),
                      fast_step=LlamaDecodeStep(model, [adapters[r] for r in rows]) if fast else None)

    (tokens, logprobs), (plain_tokens, plain_logprobs) = run(True), run(False)
    assert tokens == plain_tokens
    assert drops and len({len(row) for row in tokens}) > 1  # rows ended at different steps and left the batch
    for mine, theirs in zip(logprobs, plain_logprobs):
        torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs), rtol=1e-5, atol=1e-5)


def test_a_model_without_adapters_is_supported(tokenizer):
    model = build_model(tokenizer)
    assert LlamaDecodeStep.supports(model)
    cache_rows = [0, 2]
    ours_cache, _ = _prompt_cache(model, [None] * 3, cache_rows)
    their_cache, _ = _prompt_cache(model, [None] * 3, cache_rows)
    inputs = _step_inputs(cache_rows, ours_cache.get_seq_length())
    torch.testing.assert_close(LlamaDecodeStep(model, [None, None])(*inputs, ours_cache),
                               _reference_step(model, [None, None], *inputs, their_cache), rtol=1e-5, atol=1e-5)


def test_what_it_was_not_checked_against_uses_the_model_forward(tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    assert not LlamaDecodeStep.supports(GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50)))
    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, attention_bias=True)
    assert not LlamaDecodeStep.supports(LlamaForCausalLM(config))
    model = build_model(tokenizer)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not LlamaDecodeStep.supports(model)
    assert not LlamaDecodeStep.supports(model.to(torch.bfloat16))
    if "lora_bias" in peft.LoraConfig.__dataclass_fields__:  # peft >= 0.14
        with_bias = peft.get_peft_model(build_model(tokenizer), peft.LoraConfig(r=2, target_modules=["q_proj"], lora_bias=True))
        assert not LlamaDecodeStep.supports(with_bias)


def test_outside_the_declared_ranges_the_model_forward_decodes(tokenizer, monkeypatch):
    """transformers out of range (the Llama module layout it reads may differ) or torch without the
    packed-product operators: the model's own forward."""
    from trainers.generation import llama_step

    model = build_model(tokenizer)
    monkeypatch.setattr(llama_step, "in_tested_range", lambda dist: dist != "transformers")
    assert not LlamaDecodeStep.supports(model)
    monkeypatch.setattr(llama_step, "in_tested_range", lambda dist: True)
    monkeypatch.setattr(llama_step, "packing_works", lambda: False)
    assert not LlamaDecodeStep.supports(model)


def test_a_weight_onednn_refuses_leaves_decoding_to_the_model_forward(tokenizer, monkeypatch):
    from trainers.generation import llama_step

    model = build_model(tokenizer)
    assert isinstance(LlamaDecodeStep.build(model, [None]), LlamaDecodeStep)

    def refuse(weight):
        raise RuntimeError("oneDNN: unsupported layout")

    monkeypatch.setattr(llama_step, "_pack", refuse)
    assert LlamaDecodeStep.supports(model) and LlamaDecodeStep.build(model, [None]) is None


def test_other_peft_tuners_trained_modules_and_dropout_use_the_model_forward(tokenizer):
    """The step reads LoRA only: another tuner's layers would be skipped (IA3 scales, a prompt's virtual
    tokens), a ``modules_to_save`` norm would be one adapter's for every row, and attention dropout in
    train mode is not applied by the step."""
    ia3 = peft.get_peft_model(build_model(tokenizer), peft.IA3Config(
        target_modules=["k_proj", "v_proj", "down_proj"], feedforward_modules=["down_proj"]))
    assert not LlamaDecodeStep.supports(ia3)
    prompt = peft.get_peft_model(build_model(tokenizer), peft.PromptTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=3))
    assert not LlamaDecodeStep.supports(prompt)
    norm = peft.get_peft_model(build_model(tokenizer), peft.LoraConfig(
        r=2, target_modules=["q_proj"], modules_to_save=["input_layernorm"]))
    assert not LlamaDecodeStep.supports(norm)
    model = build_model(tokenizer)
    model.config.attention_dropout = 0.1
    assert LlamaDecodeStep.supports(model)  # eval mode: no dropout either way
    model.train()
    assert not LlamaDecodeStep.supports(model)
