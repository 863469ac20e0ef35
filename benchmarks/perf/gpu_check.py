"""``python -m benchmarks.perf.gpu_check``: the transformers backend and the loss on a CUDA GPU, against the CPU.

Four subcommands, each printing one JSON object (and writing it to ``--out`` when given):

* ``make-model --config-dir D --target P``: a randomly initialised causal LM built from the
  ``config.json`` and tokenizer files in ``D`` (e.g. SmolLM2-135M-Instruct's, without its weights),
  saved with ``save_pretrained`` to ``P`` so that the trainer can load it as ``model=P``.
* ``numerics --model P``: for the same weights (random LoRA adapters for two agents on one base) and
  the same prompts (the first observations of ``coop_procedural-v1``), greedy replies of the
  transformers backend (:mod:`trainers.generation.decode`) on CUDA vs the CPU, and per-token log-probs
  and their gradients from the trainer's loss path (``Policies.token_logprobs``) on CUDA vs the CPU,
  in float32 and under bfloat16 autocast.
* ``fsdp-one-process --model P`` (under ``torchrun --nproc_per_node 1``): :mod:`trainers.fsdp` on one
  GPU over NCCL, against the same policies unsharded (:func:`fsdp_one_process`).
* ``timing --model P --dtype float32|bfloat16``: MAGRPO steps of 2 agents × G=4 × exactly ``--tokens``
  new tokens (end of sequence suppressed until then) on one fixed prompt, the trainer's own
  ``perf/rollout_s`` and ``perf/update_s`` after one warm-up step, plus generation alone with
  ``torch.cuda.synchronize`` around it, and the peak GPU memory.

The GPU check in ``benchmarks/results/gpu_check.md`` was made with these.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

AGENTS_ENV = "coop_procedural-v1"


def _emit(result: dict, out: str | None) -> None:
    text = json.dumps(result, indent=2, default=str)
    print(text, flush=True)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- make-model
def make_model(config_dir: str, target: str, seed: int = 0) -> dict:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    config = AutoConfig.from_pretrained(config_dir)
    config.dtype = "float32"
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(config_dir)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    for name in ("generation_config.json",):
        source = Path(config_dir) / name
        if source.is_file():
            (Path(target) / name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return {"target": target, "architecture": config.architectures, "parameters": sum(p.numel() for p in model.parameters()),
            "seed": seed}


# ---------------------------------------------------------------------------- numerics
def _observations() -> dict[str, str]:
    import llm_coop_envs

    env = llm_coop_envs.make(AGENTS_ENV, level=1)
    observations, _ = env.reset(seed=0)
    return {agent: observations[agent] for agent in env.possible_agents}


def _policies(model_path: str, agents, device: str, train_dtype: str = "float32"):
    from trainers.config import TrainConfig
    from trainers.policy import build_policies, load_model

    cfg = TrainConfig(env=AGENTS_ENV, model=model_path, device=device, train_dtype=train_dtype, lora_r=8, lora_alpha=16)
    return build_policies(agents, cfg, load_model(model_path))


def _randomise_adapters(policies, seed: int = 1) -> None:
    """LoRA B starts at zero (the adapters change nothing): give every adapter its own random B."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for key in policies.keys:
            for name, param in policies.named_trainable(key).items():
                if ".lora_B." in name:
                    param.copy_(torch.randn(param.shape, generator=generator) * 0.02)


def _greedy(policies, observations, dtype: str, tokens: int):
    from trainers.config import SamplingConfig
    from trainers.generation.base import GenerationRequest
    from trainers.generation.transformers_backend import TransformersBackend

    sampling = SamplingConfig(temperature=0.0, max_new_tokens=tokens)
    backend = TransformersBackend(policies, dtype=dtype, min_new_tokens=tokens)
    requests = [GenerationRequest(agent, observations[agent], 1, sampling) for agent in policies.agents]
    out = backend.generate(requests)
    return {agent: list(group[0].completion_ids) for agent, group in zip(policies.agents, out)}, \
           {agent: list(group[0].logprobs) for agent, group in zip(policies.agents, out)}


def _sampled(policies, observations, tokens: int, samples: int, seed: int):
    import torch

    from trainers.config import SamplingConfig
    from trainers.generation.base import GenerationRequest
    from trainers.generation.transformers_backend import TransformersBackend

    torch.manual_seed(seed)
    sampling = SamplingConfig(temperature=1.0, max_new_tokens=tokens)
    backend = TransformersBackend(policies, dtype="float32")
    requests = [GenerationRequest(agent, observations[agent], samples, sampling) for agent in policies.agents]
    return {agent: [list(c.completion_ids) for c in group] for agent, group in zip(policies.agents, backend.generate(requests))}


def _top2(policies, observations, completions_by_agent):
    """Teacher-forced along each reply (float32, this device): at every position, the arg-max token and
    the gap between the two largest logits (read from the output layer's forward)."""
    import torch

    from trainers.logprobs import completion_logprobs

    result = {}
    for agent in policies.agents:
        slot = policies.activate(agent)
        prompt = policies.prompt_ids(agent, observations[agent])
        rows = []
        for completion in completions_by_agent[agent]:
            seen = []
            handle = slot.model.get_output_embeddings().register_forward_hook(lambda m, a, out: seen.append(out.detach()))
            try:
                with torch.no_grad():
                    completion_logprobs(slot.model, slot.tokenizer, [prompt], [completion], policies.device)
            finally:
                handle.remove()
            logits = seen[-1][0, -len(completion) - 1 : -1].float()
            top = logits.topk(2, dim=-1)
            rows.append((top.indices[:, 0].cpu().tolist(), (top.values[:, 0] - top.values[:, 1]).cpu().tolist()))
        result[agent] = rows
    return result


def _argmax_agreement(reference, other) -> dict:
    positions = same = 0
    smallest_gap_where_different = None
    for agent, rows in reference.items():
        for (ref_ids, ref_gaps), (ids, _) in zip(rows, other[agent]):
            for a, b, gap in zip(ref_ids, ids, ref_gaps):
                positions += 1
                same += a == b
                if a != b:
                    smallest_gap_where_different = gap if smallest_gap_where_different is None else min(gap, smallest_gap_where_different)
    gaps = [g for rows in reference.values() for _, row_gaps in rows for g in row_gaps]
    return {"positions": positions, "same_argmax": same, "min_top2_gap_cpu": min(gaps),
            "smallest_top2_gap_where_argmax_differs": smallest_gap_where_different}


def _logprobs_and_grads(policies, observations, completions_by_agent):
    result = {}
    for agent in policies.agents:
        completions = completions_by_agent[agent]
        prompts = [policies.prompt_ids(agent, observations[agent])] * len(completions)
        params = policies.named_trainable(policies.slots[agent].key)
        for p in params.values():
            p.grad = None
        logps, mask = policies.token_logprobs(agent, prompts, completions)
        (logps.float() * mask).sum().backward()
        grads = {name: p.grad.detach().float().cpu().clone() for name, p in params.items() if p.grad is not None}
        result[agent] = (logps.detach().float().cpu(), mask.detach().cpu(), grads)
    return result


def _compare(reference, other) -> dict[str, float]:
    import torch

    diffs, grad_rel = [], []
    for agent, (logps, mask, grads) in reference.items():
        o_logps, o_mask, o_grads = other[agent]
        assert torch.equal(mask, o_mask.to(mask.dtype))
        diffs.append(((logps - o_logps).abs() * mask).flatten()[mask.flatten() > 0])
        for name, g in grads.items():
            grad_rel.append(float((g - o_grads[name]).norm() / g.norm().clamp_min(1e-30)))
    diff = torch.cat(diffs)
    return {"logp_max_abs_diff": float(diff.max()), "logp_mean_abs_diff": float(diff.mean()), "tokens": int(diff.numel()),
            "grad_max_rel_l2_diff": max(grad_rel), "grad_tensors": len(grad_rel)}


def _device_name(device: str) -> str:
    import torch

    return torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else device


def numerics(model_path: str, tokens: int, samples: int, gpu: str = "cuda") -> dict:
    import torch

    observations = _observations()
    agents = tuple(observations)
    cpu = _policies(model_path, agents, "cpu")
    _randomise_adapters(cpu)
    on_gpu = _policies(model_path, agents, gpu)
    gpu_bf16 = _policies(model_path, agents, gpu, train_dtype="bfloat16")
    for policies in (on_gpu, gpu_bf16):
        for key in cpu.keys:
            policies.load_state_dict(key, cpu.state_dict(key))

    result: dict = {"device": gpu, "device_name": _device_name(gpu), "torch": torch.__version__,
                    "agents": list(agents), "prompt_tokens": {a: len(cpu.prompt_ids(a, observations[a])) for a in agents},
                    "new_tokens": tokens}
    greedy_cpu, greedy_cpu_logps = _greedy(cpu, observations, "float32", tokens)
    greedy_gpu, greedy_gpu_logps = _greedy(on_gpu, observations, "float32", tokens)
    greedy_bf16, _ = _greedy(gpu_bf16, observations, "bfloat16", tokens)

    def first_difference(a, b):
        return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))

    result["greedy_fp32_cuda_equals_cpu"] = {a: greedy_cpu[a] == greedy_gpu[a] for a in agents}
    result["greedy_fp32_first_difference"] = {a: first_difference(greedy_cpu[a], greedy_gpu[a]) for a in agents}
    result["greedy_bf16_cuda_first_difference_vs_cpu_fp32"] = {a: first_difference(greedy_cpu[a], greedy_bf16[a]) for a in agents}
    result["greedy_distinct_tokens"] = {a: len(set(greedy_cpu[a])) for a in agents}
    result["greedy_head"] = {a: greedy_cpu[a][:12] for a in agents}
    result["greedy_top2_gap_min_cpu"] = {a: min(rows[0][1]) for a, rows in _top2(cpu, observations, {a: [greedy_cpu[a]] for a in agents}).items()}
    result["sampler_logps_fp32_max_abs_diff_cuda_vs_cpu"] = max(
        abs(x - y) for a in agents for x, y in zip(greedy_cpu_logps[a], greedy_gpu_logps[a]))

    # Log-probs and gradients of the loss path: greedy replies plus sampled ones (G rows share a prompt,
    # so the shared-prompt KV path of trainers.logprobs runs), scored on the CPU and on CUDA.
    sampled = _sampled(cpu, observations, tokens, samples, seed=3)
    completions = {a: [greedy_cpu[a], *sampled[a]] for a in agents}
    result["scored_rows_per_agent"] = {a: len(completions[a]) for a in agents}
    result["scored_lengths"] = {a: [len(c) for c in completions[a]] for a in agents}
    try:  # arg-max at every position of every (diverse, sampled) reply: greedy choices along varied prefixes
        result["argmax_along_replies_fp32_cuda_vs_cpu"] = _argmax_agreement(
            _top2(cpu, observations, completions), _top2(on_gpu, observations, completions))
    except Exception as error:  # noqa: BLE001 - recorded, the other checks still run
        result["argmax_along_replies_fp32_cuda_vs_cpu"] = f"error: {error!r}"
    reference = _logprobs_and_grads(cpu, observations, completions)
    result["loss_fp32_cuda_vs_cpu"] = _compare(reference, _logprobs_and_grads(on_gpu, observations, completions))
    result["loss_bf16_cuda_vs_cpu_fp32"] = _compare(reference, _logprobs_and_grads(gpu_bf16, observations, completions))
    return result


# ---------------------------------------------------------------------------- timing
def _profile_generation(backend, requests, sync) -> dict:
    """One generation call under the torch profiler: wall time against the GPU's busy time (sum of its
    kernels), and the host-side operators that take the most time."""
    from torch.profiler import ProfilerActivity, profile

    sync()
    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        backend.generate(requests)
        sync()
    wall = time.perf_counter() - start
    events = prof.key_averages()
    device_us = sum(getattr(e, "self_device_time_total", 0) for e in events)
    launches = sum(e.count for e in events if "LaunchKernel" in e.key)
    top = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:10]
    return {"wall_s_under_profiler": wall, "gpu_busy_s": device_us / 1e6,
            "kernel_launches": launches,
            "top_host_ops_self_cpu_s": {e.key: round(e.self_cpu_time_total / 1e6, 3) for e in top}}


def timing(model_path: str, dtype: str, tokens: int, steps: int, run_dir: str, gpu: str = "cuda",
           profile_generation: bool = False) -> dict:
    import torch

    from benchmarks.perf.trainer_step import _PromptTask
    from llm_coop_envs.core import CoopEnv
    from trainers.config import SamplingConfig, TrainConfig
    from trainers.generation.base import GenerationRequest
    from trainers.generation.transformers_backend import TransformersBackend
    from trainers.trainer import Trainer

    agents = ("helper", "main")
    cfg = TrainConfig(
        env="bench-v0", model=model_path, group_size=4, steps=100, lora_r=8, lora_alpha=16,
        sampling={"temperature": 1.0, "max_new_tokens": tokens}, run_dir=run_dir, run_name=f"timing-{dtype}",
        overwrite=True, tensorboard=False, progress_bar=False, log_samples=0, micro_batch_size=8,
        generation_dtype=dtype, train_dtype=dtype, device=gpu,
    )
    trainer = Trainer(cfg, env=CoopEnv(_PromptTask(agents)),
                      backend=lambda policies: TransformersBackend(policies, dtype=dtype, min_new_tokens=tokens))
    cuda = trainer.policies.device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    initial = {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}
    rows = []
    for _ in range(steps + 1):  # the first step warms up (CUDA context, kernels, allocator)
        sync()
        metrics = trainer.train_step()
        sync()
        trainer.step += 1
        rows.append({k: metrics[k] for k in ("perf/rollout_s", "perf/update_s", "perf/step_s", "perf/generated_tokens",
                                             "reward/mean") if k in metrics}
                    | {k: v for k, v in metrics.items() if k.endswith(("/sampler_logp_gap", "/loss", "/grad_norm"))})
    changed = {}
    for key, before in initial.items():
        after = trainer.policies.state_dict(key)
        delta = sum(float((after[name] - tensor).double().norm() ** 2) for name, tensor in before.items()) ** 0.5
        changed[key] = {"tensors": len(before), "l2_change": delta}
    sampling = SamplingConfig(temperature=1.0, max_new_tokens=tokens)
    requests = [GenerationRequest(a, _PromptTask(agents).prompt(0, a), 4, sampling) for a in agents]
    generation = []
    for _ in range(steps):
        sync()
        start = time.perf_counter()
        out = trainer.backend.generate(requests)
        sync()
        generation.append(time.perf_counter() - start)
    lengths = [len(c.completion_ids) for group in out for c in group]
    profile = _profile_generation(trainer.backend, requests, sync) if cuda and profile_generation else None
    timed = rows[1:]

    def median(key):
        return statistics.median(r[key] for r in timed)

    return {
        "device": str(trainer.policies.device), "device_name": _device_name(str(trainer.policies.device)),
        "torch": torch.__version__, "dtype": dtype,
        "agents": len(agents), "group_size": 4, "new_tokens": tokens, "timed_steps": steps,
        "rollout_s_median": median("perf/rollout_s"), "update_s_median": median("perf/update_s"),
        "step_s_median": median("perf/step_s"), "warmup_step_s": rows[0]["perf/step_s"],
        "generation_only_s": generation, "generation_rows_lengths": sorted(set(lengths)),
        "generation_tokens_per_s": statistics.median(sum(lengths) / t for t in generation),
        "trained_weights_change": changed, "generation_profile": profile,
        "peak_gpu_memory_mb": torch.cuda.max_memory_allocated() / 2**20 if cuda else None, "steps": rows,
    }


# ---------------------------------------------------------------------------- FSDP2, one process
def fsdp_one_process(model_path: str, tokens: int, gpu: str = "cuda") -> dict:
    """trainers.fsdp on one GPU (run under ``torchrun --nproc_per_node 1``, NCCL): the same two-agent
    LoRA policies, one copy sharded with :func:`trainers.fsdp.shard` and one plain; greedy replies
    generated inside :func:`trainers.fsdp.gathered`, and one AdamW update of each agent as the trainer
    makes it under FSDP (``unshard(accumulate=True)``, backward, ``reduce_gradients``, step), then the
    weights gathered with ``full_tensor`` and compared with the plain copy's."""
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import DTensor

    from trainers import fsdp
    from trainers.config import SamplingConfig
    from trainers.generation.base import GenerationRequest
    from trainers.generation.transformers_backend import TransformersBackend
    from trainers.logprobs import pad_token_id

    cuda = gpu.startswith("cuda")
    dist.init_process_group("nccl" if cuda else "gloo")
    if cuda:
        device = torch.device(gpu)
        torch.cuda.set_device(device.index if device.index is not None else 0)
    observations = _observations()
    agents = tuple(observations)
    plain, sharded = _policies(model_path, agents, gpu), _policies(model_path, agents, gpu)
    _randomise_adapters(plain)
    for key in plain.keys:
        sharded.load_state_dict(key, plain.state_dict(key))
    model = sharded.slots[agents[0]].model
    fsdp.shard(model, fsdp.FsdpSettings(layer_classes=("LlamaDecoderLayer",)), torch.device(gpu).type)
    dtensors = sum(isinstance(p, DTensor) for p in model.parameters())
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=tokens)
    requests = [GenerationRequest(a, observations[a], 1, sampling) for a in agents]
    replies_plain = TransformersBackend(plain, dtype="float32").generate(requests)
    with fsdp.gathered([model]):
        replies_sharded = TransformersBackend(sharded, dtype="float32").generate(requests)
    same_replies = [a[0].completion_ids == b[0].completion_ids for a, b in zip(replies_plain, replies_sharded)]

    def update(policies, sharded_model=None):
        losses = {}
        for agent, group in zip(agents, replies_plain):
            key = policies.slots[agent].key
            optimizer = torch.optim.AdamW(list(policies.named_trainable(key).values()), lr=1e-3)
            if sharded_model is not None:
                fsdp.unshard(sharded_model, accumulate=True)
            logps, mask = policies.token_logprobs(agent, [group[0].prompt_ids] * 2, [group[0].completion_ids] * 2)
            loss = -(logps * mask).sum() / mask.sum()
            loss.backward()
            if sharded_model is not None:
                slot = policies.activate(agent)

                def zero_backward():
                    ids = torch.tensor([[pad_token_id(slot.tokenizer)]], device=policies.device)
                    sharded_model(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=1).logits.sum().mul(0.0).backward()

                fsdp.reduce_gradients(sharded_model, zero_backward)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses[agent] = float(loss)
        return losses

    before = {key: plain.state_dict(key) for key in plain.keys}
    loss_plain, loss_sharded = update(plain), update(sharded, model)
    diffs, moved = {}, {}
    for key in plain.keys:
        a, b = plain.state_dict(key), sharded.state_dict(key)
        diffs[key] = max(float((a[n] - b[n]).abs().max()) for n in a)
        moved[key] = max(float((a[n] - before[key][n]).abs().max()) for n in a)
    dist.destroy_process_group()
    return {"device_name": _device_name(gpu), "world_size": 1, "backend": "nccl" if cuda else "gloo",
            "sharded_parameters_dtensor": dtensors, "parameters": sum(1 for _ in model.parameters()),
            "greedy_tokens": tokens, "greedy_equal_sharded_vs_plain": same_replies,
            "loss_plain": loss_plain, "loss_sharded": loss_sharded,
            "weights_max_abs_diff_sharded_vs_plain": diffs, "weights_max_abs_change_from_update": moved}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.gpu_check", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-model")
    make.add_argument("--config-dir", required=True)
    make.add_argument("--target", required=True)
    make.add_argument("--seed", type=int, default=0)
    num = sub.add_parser("numerics")
    num.add_argument("--model", required=True)
    num.add_argument("--tokens", type=int, default=128)
    num.add_argument("--samples", type=int, default=3)
    tim = sub.add_parser("timing")
    tim.add_argument("--model", required=True)
    tim.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    tim.add_argument("--tokens", type=int, default=128)
    tim.add_argument("--steps", type=int, default=3)
    tim.add_argument("--run-dir", default=str(Path(tempfile.gettempdir()) / "gpu-check-runs"))
    tim.add_argument("--profile", action="store_true", help="also profile one generation call (CUDA only)")
    fs = sub.add_parser("fsdp-one-process")
    fs.add_argument("--model", required=True)
    fs.add_argument("--tokens", type=int, default=32)
    for p in (num, tim, fs):
        p.add_argument("--gpu", default="cuda", help="the device compared with the CPU (``cpu`` runs the script's logic alone)")
    for p in (make, num, tim, fs):
        p.add_argument("--out")
    args = parser.parse_args(argv)
    if args.command == "make-model":
        result = make_model(args.config_dir, args.target, args.seed)
    elif args.command == "numerics":
        result = numerics(args.model, args.tokens, args.samples, args.gpu)
    elif args.command == "fsdp-one-process":
        result = fsdp_one_process(args.model, args.tokens, args.gpu)
    else:
        result = timing(args.model, args.dtype, args.tokens, args.steps, args.run_dir, args.gpu, args.profile)
    _emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
