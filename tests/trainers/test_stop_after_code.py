"""``sampling.stop_after_code``: a reply ends at the closing fence of its code block, in the batched
CPU decode (each row on its own) and, for vLLM, as its documented ``stop`` parameter."""

from __future__ import annotations

import pytest

from trainers.config import SamplingConfig
from trainers.generation.base import VLLM_CODE_STOP, code_block_end, cut_reply


@pytest.mark.parametrize(("text", "end"), [
    ("```python\nx = 1\n```\nThat is all.", len("```python\nx = 1\n```")),
    ("Here:\n```\ndef f():\n    return 1\n```", len("Here:\n```\ndef f():\n    return 1\n```")),
    ("```python\nx = 1\n", None),  # still inside the block
    ("```python", None),  # the opening fence's line is not finished
    ("no code at all", None),
])
def test_the_closing_fence_is_found_only_after_an_opening_one(text, end):
    assert code_block_end(text) == end


def test_a_reply_keeps_its_closing_fence_and_drops_what_follows():
    text = "```python\ndef aux(x):\n    return x\n```\nExplanation that costs tokens."
    assert cut_reply(text, (), stop_after_code=True) == "```python\ndef aux(x):\n    return x\n```"
    assert cut_reply(text, ()) == text  # off by default
    assert cut_reply(text, ("Explanation",), stop_after_code=False).endswith("```\n")


def test_vllm_gets_the_fence_as_a_kept_stop_string():
    from trainers.generation.vllm_backend import stop_parameters

    on = stop_parameters(SamplingConfig(stop=("\n\n\n",), stop_after_code=True))
    assert on == {"stop": ["\n\n\n", VLLM_CODE_STOP], "include_stop_str_in_output": True}
    assert stop_parameters(SamplingConfig()) == {"stop": None, "include_stop_str_in_output": False}
    # The stop string never fires on an opening fence with a language, wherever it stands.
    assert VLLM_CODE_STOP not in "Sure:\n```python\ndef f():\n"


def test_vllm_text_is_cut_after_the_closing_fence():
    from trainers.generation.vllm_backend import Sample, _completion

    class Job:
        sampling = SamplingConfig(stop_after_code=True)
        prompt_ids = (1, 2)

    sample = Sample("```python\nx = 1\n```\n", (5, 6, 7), None, "stop")
    assert _completion(Job, sample).text == "```python\nx = 1\n```"


torch = pytest.importorskip("torch")


def test_the_batched_decode_stops_each_row_at_its_own_closing_fence(tiny_models):
    """A stand-in ``decode_text`` closes a row's code block after 3 + (first token mod 3) tokens: each
    row stops there, whatever the other rows do, and the fast and plain loops agree."""
    from trainers.generation.decode import DecodeSettings, decode

    model, tokenizer = tiny_models
    prompts = [tokenizer.encode("def add(x, y): return"), tokenizer.encode("helper main agents")]

    def closes_after(ids):
        return 3 + ids[0] % 3

    def decode_text(ids):
        return "```python\n" + "x" * len(ids) + ("\n```" if len(ids) >= closes_after(ids) else "")

    settings = DecodeSettings(max_new_tokens=12, temperature=1.0, stop_after_code=True)
    results = []
    for compact in (True, False):
        torch.manual_seed(0)
        results.append(decode(model, prompts, [0, 0, 0, 1, 1, 1], settings, lambda rows: _no_adapter(),
                              decode_text=decode_text, compact=compact)[0])
    tokens = results[0]
    assert [len(row) for row in tokens] == [closes_after(row) for row in tokens]
    assert len({len(row) for row in tokens}) > 1  # rows stopped at different steps
    assert [row[: len(t)] for row, t in zip(results[1], tokens)] == tokens


def test_the_transformers_backend_keeps_the_fence_and_is_not_truncated(tokenizer):
    from trainers.generation.transformers_backend import _completion

    text = "```python\nx = 1\n```\nmore words"
    ids = tokenizer.encode(text)
    sampling = SamplingConfig(max_new_tokens=len(ids) + 5, stop_after_code=True)
    completion = _completion([1], ids, [0.0] * len(ids), tokenizer, sampling, frozenset({tokenizer.eos_token_id}))
    assert completion.text == "```python\nx = 1\n```" and not completion.truncated
    plain = _completion([1], ids, [0.0] * len(ids), tokenizer, SamplingConfig(max_new_tokens=len(ids)), frozenset())
    assert plain.text == text and plain.truncated


def _no_adapter():
    import contextlib

    return contextlib.nullcontext()
