"""``python -m benchmarks.perf.step_floor``: how much of a MAGRPO step is left to take away.

The trainer-step benchmark (:mod:`benchmarks.perf.trainer_step`) compares one MAGRPO step (2 agents x
G = 4, 128 tokens) with one step of TRL's ``GRPOTrainer``. This one asks how far our step could still
fall with the same weights, in fp32, on this CPU. It times the step, then only the kernels a step
cannot skip, called back to back with nothing else between them:

* **decode**: for each of the 128 new tokens, every layer's weight products as the engine's packed
  model runs them (packed q/k/v, o, gate/up, down, each with both agents' LoRA, and the lm_head) and its
  attention over a cache of the step's length, for the benchmark's 8 rows;
* **prefill**: the forward of the two distinct prompts;
* **update**: under the torch profiler, a real update's matrix products and attention kernels (forward
  and backward, their self time) and the loss's passes over the vocabulary (the log-sum-exp and the
  hand-written backward of :mod:`llm_coop_envs.lm.distribution`, their total time).

Their sum is the step with all Python, all small operators, sampling, scoring and bookkeeping removed:
no implementation of the same arithmetic with these kernels goes below it. The report gives it as a
share of TRL's step timed in the same run. It also times one loss pass over both agents' 8 rows against
one pass per agent (4 rows each), the largest saving a merged loss pass could give (one adapter for the
8 rows: a per-row adapter would add work). Results go to ``benchmarks/results/step_floor.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from benchmarks.machine import uptime
from benchmarks.perf.trainer_step import PROMPT, our_trainer, spread, time_ours, time_trl
from benchmarks.perf.update_profile import MATMUL_OPS, reference_gflops

RESULTS_NAME = "step_floor.md"
KERNELS = (*MATMUL_OPS, "aten::_scaled_dot_product_flash_attention_for_cpu",
           "aten::_scaled_dot_product_flash_attention_for_cpu_backward")
"""Counted by self time: the products and attention, forward and backward."""
VOCABULARY_PASSES = ("aten::logsumexp", "autograd::engine::evaluate_function: _ScoredTokensBackward")
"""Counted by total time (they call no product): the loss's softmax over the vocabulary, forward and backward."""


def decode_kernels(trainer, tokens: int) -> float:
    """Seconds of ``tokens`` decode steps' weight products and attention for both agents' 4 rows each:
    per layer one product each for q/k/v (with every adapter's A as extra columns), o, gate/up (the same)
    and down, in oneDNN's packed layout where torch has it, each row's LoRA B product, the attention over
    a cache of the step's length, and the output layer. The weights are the engine's, packed here: the
    floor does not depend on how the engine calls them."""
    from llm_coop_envs.lm.load import from_transformers

    policies = trainer.policies
    agents = list(policies.slots)
    owned = from_transformers(policies.slots[agents[0]].model)
    shape, rows = owned.shape, 8
    prompt = len(policies.prompt_ids(agents[0], PROMPT))
    group = shape.heads // shape.kv_heads
    x, x_inner = torch.randn(rows, shape.hidden), torch.randn(rows, shape.intermediate)
    queries = torch.randn(rows, shape.kv_heads, group, shape.head_dim)
    cache = [torch.randn(2, rows, shape.kv_heads, prompt + tokens, shape.head_dim) for _ in owned.blocks]
    layers = [_packed_layer(block) for block in owned.blocks]
    head = _pack(owned.embed if owned.head is None else owned.head)
    started = time.perf_counter()
    with torch.no_grad():
        for new in range(tokens):
            length = prompt + new + 1
            mask = torch.zeros(rows, 1, 1, length)
            for layer, kv in zip(layers, cache):
                for (weight, b), inputs in zip(layer, (x, x, x, x_inner)):
                    out = _product(inputs, weight)
                    if b is not None:
                        out[..., -b.shape[1]:] @ b.T
                F.scaled_dot_product_attention(queries, kv[0, :, :, :length], kv[1, :, :, :length], attn_mask=mask)
            _product(x, head)
    return time.perf_counter() - started


def _packed_layer(block) -> list[tuple]:
    """(packed weight with every adapter's A as extra rows, every adapter's B side by side or None) for
    q/k/v, o, gate/up and down."""
    layer = []
    for names in (("q", "k", "v"), ("o",), ("gate", "up"), ("down",)):
        linears = [block.proj[name] for name in names]
        outputs = [linear.weight.shape[0] for linear in linears]
        a = [t for linear in linears for t in linear.lora_a]
        # each B at its own projection's output rows, so one product adds every adapter's term
        b = [F.pad(t.detach(), (0, 0, sum(outputs[:i]), sum(outputs[i + 1:])))
             for i, linear in enumerate(linears) for t in linear.lora_b]
        weight = torch.cat([linear.weight for linear in linears] + a).detach()
        layer.append((_pack(weight), torch.cat(b, dim=1) if b else None))
    return layer


def _pack(weight: torch.Tensor):
    weight = weight.detach().contiguous()
    try:
        return torch.ops.mkldnn._reorder_linear_weight(weight, None), True
    except (AttributeError, RuntimeError):  # no oneDNN in this torch: the plain product
        return weight, False


def _product(x: torch.Tensor, packed) -> torch.Tensor:
    weight, onednn = packed
    return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], "") if onednn else F.linear(x, weight)


def prefill_seconds(trainer) -> float:
    """The forward of the two agents' prompts (one row each, no gradient; logits of the last position only)."""
    policies = trainer.policies
    prompts = torch.tensor([policies.prompt_ids(agent, PROMPT) for agent in policies.slots])
    model = next(iter(policies.slots.values())).model
    started = time.perf_counter()
    with torch.no_grad():
        model(input_ids=prompts, logits_to_keep=1)
    return time.perf_counter() - started


def update_kernels(trainer, items) -> tuple[float, float]:
    """(seconds of the update's kernels under the profiler (:func:`kernel_seconds`), the update's wall time)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        started = time.perf_counter()
        trainer.update(items)
        wall = time.perf_counter() - started
    return kernel_seconds(prof.key_averages()), wall


def kernel_seconds(events) -> float:
    """Self time of :data:`KERNELS` plus total time of :data:`VOCABULARY_PASSES`, in seconds."""
    kernels = sum(e.self_cpu_time_total for e in events if e.key in KERNELS)
    return (kernels + sum(e.cpu_time_total for e in events if e.key in VOCABULARY_PASSES)) / 1e6


def merged_loss_pass(trainer, items) -> tuple[float, float]:
    """(seconds of one agent's loss pass and backward over its 4 rows, done twice; the same over 8 rows
    under one adapter: the 4 rows plus 4 with a second prompt of the same length)."""
    agent = next(iter(items))
    prompts = [i.prompt_ids for i in items[agent]]
    completions = [i.completion_ids for i in items[agent]]
    other = [tuple(p[:-3]) + (p[-1],) * 3 for p in prompts]  # another prompt: the 8 rows hold 2, as both agents' do

    def loss_pass(prompts, completions) -> float:
        started = time.perf_counter()
        logps, mask = trainer.policies.token_logprobs(agent, prompts, completions)
        (logps * mask).sum().backward()
        return time.perf_counter() - started

    separate = loss_pass(prompts, completions) + loss_pass(prompts, completions)
    merged = loss_pass(prompts + other, completions + completions)
    for param in trainer.policies.named_trainable(trainer.policies.slots[agent].key).values():
        param.grad = None
    return separate, merged


def stream_gbps() -> float:
    """GB/s of summing 256 MB: how fast this machine reads memory with a plain kernel."""
    big = torch.randn(64 * 1024 * 1024)
    big.sum()
    started = time.perf_counter()
    for _ in range(5):
        big.sum()
    return 5 * big.numel() * 4 / (time.perf_counter() - started) / 1e9


def measure(repeats: int, tokens: int) -> dict[str, list[float]]:
    trainer = our_trainer(("helper", "main"), tokens, tempfile.mkdtemp())
    time_ours(trainer)  # warm-up
    runs: dict[str, list[float]] = {name: [] for name in (
        "step", "rollout", "update", "decode", "prefill", "update_kernels", "update_profiled",
        "separate", "merged", "gemm", "stream")}
    for _ in range(repeats):
        for name, value in time_ours(trainer).items():
            runs[name.removesuffix("_s")].append(value)
        items = trainer.training_items(trainer.rollout())
        runs["decode"].append(decode_kernels(trainer, tokens))
        runs["prefill"].append(prefill_seconds(trainer))
        kernels, wall = update_kernels(trainer, items)
        runs["update_kernels"].append(kernels)
        runs["update_profiled"].append(wall)
        separate, merged = merged_loss_pass(trainer, items)
        runs["separate"].append(separate)
        runs["merged"].append(merged)
        runs["gemm"].append(reference_gflops())
        runs["stream"].append(stream_gbps())
    del trainer
    runs["trl"] = time_trl(repeats + 1, tokens, tempfile.mkdtemp())[1:]
    runs["floor"] = [d + p + u for d, p, u in zip(runs["decode"], runs["prefill"], runs["update_kernels"])]
    return runs


def report(runs: dict[str, list[float]], uptimes: tuple[str, str], command: str, tokens: int) -> str:
    import transformers

    def per_repeat(top: str, bottom: str) -> list[float]:
        return [a / b for a, b in zip(runs[top], runs[bottom])]

    def s(name: str) -> str:
        return spread(runs[name], " s", 2)

    lines = [
        "# What is left of a MAGRPO step: its kernel floor", "",
        f"Command: `{command}`", "",
        f"Machine: {torch.get_num_threads()} torch threads, torch {torch.__version__}, transformers "
        f"{transformers.__version__}, Python {sys.version.split()[0]}; an fp32 product of the MLP's shape "
        f"(1024 x 576 x 1536, best of 20) runs at {spread(runs['gemm'], ' GFLOP/s', 0)}, summing 256 MB at "
        f"{spread(runs['stream'], ' GB/s', 1)}.",
        f"`uptime` at start: `{uptimes[0]}`; at end: `{uptimes[1]}`.", "",
        "The trainer-step benchmark's setting (`trainer_step.md`): SmolLM2-135M-Instruct, fp32, LoRA r=8 on "
        f"q/k/v/o, 2 agents × G=4, exactly {tokens} new tokens, one optimizer step; TRL's `GRPOTrainer` "
        "1 agent × G=4 in the same run. The floor is the step's kernels alone, called back to back "
        "(see the module's docstring): decode products and attention, prefill, and the update's products, "
        "attention and vocabulary passes (under the profiler). Median (range) over the repeats; ratios "
        "are formed per repeat.", "",
        "| measurement | seconds |", "|---|---:|",
        f"| ours: one step (rollout, update) | {s('step')} ({statistics.median(runs['rollout']):.2f}, "
        f"{statistics.median(runs['update']):.2f}) |",
        f"| TRL: one step | {s('trl')} |",
        f"| ours / TRL | **{spread(per_repeat('step', 'trl'))}** |",
        f"| floor: {tokens} decode steps' products and attention | {s('decode')} |",
        f"| floor: prefill of the two prompts | {s('prefill')} |",
        f"| floor: the update's products, attention and vocabulary passes (update under the profiler: "
        f"{s('update_profiled')}) "
        f"| {s('update_kernels')} |",
        f"| floor: total | {s('floor')} |",
        f"| floor / TRL | **{spread(per_repeat('floor', 'trl'))}** |",
        f"| ours / floor | {spread(per_repeat('step', 'floor'))} |",
        f"| loss pass and backward: one per agent (2 × 4 rows) | {s('separate')} |",
        f"| loss pass and backward: both agents' 8 rows at once (one adapter) | {s('merged')} |",
        f"| merged / separate | {spread(per_repeat('merged', 'separate'))} |",
        "",
        "What this shows: the 0.6× bar against TRL asks for a step of 0.6 × TRL's; the floor / TRL row is "
        "where this implementation would stand with every cost but the kernels removed. What it does not "
        "show: faster kernels (another BLAS, lower precision, more cores) lower the floor itself; "
        "the profiler's self times of the update's kernels include a little profiler overhead.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per completion")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of every measurement (at least 3)")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error("--repeats must be at least 3 (the report gives a median and range)")
    from benchmarks.perf.trainer_step import RESULTS

    command = "python -m benchmarks.perf.step_floor " + " ".join(sys.argv[1:] if argv is None else argv)
    started = uptime()
    runs = measure(args.repeats, args.tokens)
    text = report(runs, (started, uptime()), command.strip(), args.tokens)
    target = RESULTS.with_name(RESULTS_NAME)
    target.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
