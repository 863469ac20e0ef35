"""docs/benchmarking.md states the protocol's values (``benchmarks/learning/protocol.json``, the defaults of
``llm-coop bench``); this keeps the page true to the file."""

from pathlib import Path

from benchmarks.learning.protocol import load_protocol

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_state_the_protocols_values():
    protocol = load_protocol()
    budget = protocol.budget
    page = " ".join((ROOT / "docs" / "benchmarking.md").read_text(encoding="utf-8").split())
    assert f"`{protocol.env}` at level {protocol.env_kwargs['level']}" in page
    assert (f"{budget.steps} steps of {budget.problems_per_step} problems × G={budget.group_size} joint samples, "
            f"{budget.sample_tokens} tokens per joint sample") in page
    assert f"learning rate 2e-4, LoRA rank {budget.lora_r}" in page and budget.learning_rate == 2e-4
    assert f"temperature {budget.temperature} / top-p {budget.top_p}, clip norm {protocol.max_grad_norm}" in page
    assert f"{budget.eval_problems} held-out problems" in page and f"at steps 0 and {budget.steps}" in page
    assert budget.eval_every == budget.steps
    assert "seeds 0, 1 and 2" in page and list(protocol.seeds) == [0, 1, 2]
