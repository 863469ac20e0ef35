"""``python -m benchmarks.perf.vllm_greedy_check --model FOLDER``: vLLM's multi-LoRA greedy replies against
the transformers backend's, for both agents, before and after an update (needs a GPU and vLLM).

It builds the ``lora_per_agent`` policies (one base, one adapter per agent) from ``--model`` (a local
folder: the GPU machine may have no network), makes the two adapters differ from the base and from
each other, and asks both backends for greedy replies to the same prompts, in one batch of both
agents. Then it changes the adapters as an optimizer update would, calls ``sync_weights()`` and
compares again: a stale adapter on the vLLM side would show up as different tokens.

The report (per agent and round: equal or not, the first differing position, both token lists) goes
to ``--out`` (default ``benchmarks/results/vllm_greedy_check.md``) with the command and the versions.
The exit status is 0 when every reply matched, 1 otherwise. Small numerical differences between
vLLM's kernels and PyTorch's can flip a near-tie and make a long reply diverge late; the report
shows where, so such a case can be told from a wrong adapter (which differs from the first tokens).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "vllm_greedy_check.md"
OBSERVATIONS = {
    "helper": "Write a Python function `double(x)` that returns twice x. Reply with code only.",
    "main": "Write a Python function `is_even(n)` that returns True when n is even. Reply with code only.",
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import torch

    from trainers.config import SamplingConfig, load_config
    from trainers.generation.base import GenerationRequest
    from trainers.generation.transformers_backend import TransformersBackend
    from trainers.generation.vllm_backend import VLLMBackend
    from trainers.policy import build_policies

    cfg = load_config(model=args.model, lora_r=8, lora_alpha=16, device=args.device, generation_dtype="float32")
    policies = build_policies(tuple(OBSERVATIONS), cfg)
    greedy = SamplingConfig(temperature=0.0, max_new_tokens=args.tokens)
    requests = [GenerationRequest(agent, obs, 1, greedy) for agent, obs in OBSERVATIONS.items()]
    _change_adapters(policies, torch, seed=1)
    reference = TransformersBackend(policies, dtype="float32")
    vllm = VLLMBackend(policies, dtype=args.dtype, gpu_memory_fraction=args.gpu_memory_fraction)
    rows = _compare("initial adapters", requests, reference, vllm)
    _change_adapters(policies, torch, seed=2)
    vllm.sync_weights()
    rows += _compare("after one update", requests, reference, vllm)
    vllm.close()
    _write_report(Path(args.out), rows, argv if argv is not None else sys.argv[1:])
    return 0 if all(row["equal"] for row in rows) else 1


def _change_adapters(policies, torch, seed: int) -> None:
    """Move every LoRA B matrix (peft starts them at zero) by seeded noise, as an update would."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for key in policies.keys:
            for name, param in policies.named_trainable(key).items():
                if "lora_B" in name:
                    noise = torch.randn(param.shape, generator=generator) * 0.05
                    param.add_(noise.to(param.device, param.dtype))


def _compare(label: str, requests, reference, vllm) -> list[dict]:
    expected, served = reference.generate(requests), vllm.generate(requests)
    rows = []
    for request, want, got in zip(requests, expected, served):
        a, b = list(want[0].completion_ids), list(got[0].completion_ids)
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
        if first is None and len(a) != len(b):
            first = min(len(a), len(b))  # one reply is a prefix of the other
        rows.append({"round": label, "agent": request.agent, "equal": a == b, "first_difference": first,
                     "transformers": a, "vllm": b})
    return rows


def _write_report(path: Path, rows: list[dict], argv: list[str]) -> None:
    import torch

    try:
        import vllm

        vllm_version = vllm.__version__
    except (ImportError, AttributeError):
        vllm_version = "unknown"
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else platform.processor() or "cpu"
    lines = [
        "# vLLM multi-LoRA greedy replies against the transformers backend", "",
        f"Command: `python -m benchmarks.perf.vllm_greedy_check {' '.join(argv)}`  ",
        f"Device: {device}; torch {torch.__version__}; vLLM {vllm_version}", "",
        "| round | agent | equal | first difference | tokens (transformers / vLLM) |", "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row['round']} | {row['agent']} | {row['equal']} | {row['first_difference']} | "
                     f"{len(row['transformers'])} / {len(row['vllm'])} |")
    lines += ["", "```json", json.dumps(rows, indent=1), "```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="local folder of the base model (a Hugging Face folder)")
    parser.add_argument("--tokens", type=int, default=32, help="greedy tokens per reply")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"), help="vLLM's dtype")
    parser.add_argument("--gpu-memory-fraction", type=float, default=0.3)
    parser.add_argument("--device", default="auto", help="where the transformers backend runs")
    parser.add_argument("--out", default=str(RESULTS))
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
