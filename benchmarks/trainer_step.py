"""``python -m benchmarks.trainer_step``: speed and memory of one MAGRPO step, side by side.

Three comparisons, each in one run on the same machine, SmolLM2-135M-Instruct with LoRA r=8 on q/k/v/o:

1. **step time**: one MAGRPO step with 2 agents × G=4 (ours) against one single-agent step of
   Hugging Face TRL's ``GRPOTrainer`` with the same model, G, prompt, completion length and LoRA.
   Both generate exactly ``--tokens`` new tokens per completion (``min_new_tokens``) so the work matches.
   Target: ours ≤ 1.6 × TRL.
2. **peak memory** (max RSS of a fresh process): 2 agents on one shared base vs 1 agent. Target ≤ 1.3×.
3. **generation**: both agents' G samples in one batched call (per-row adapters) vs one call per
   agent in turn. Target ≥ 1.5× faster.

Results go to ``benchmarks/results/trainer_step.md`` with the command and machine (``--quick``, a
16-token smoke run, writes ``trainer_step_quick.md`` instead). The full run (128 tokens, 2 timed steps)
takes ~6–8 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "trainer_step.md"
PROMPT = (
    "Write a Python function `running_max(numbers)` that returns a list where element i is the largest "
    "value among numbers[0..i]. For example running_max([1, 3, 2, 5]) == [1, 3, 3, 5]. "
    "Reply with Python code only, in one ```python block."
)
LORA = dict(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])


def share_of_e(text: str) -> float:
    """A graded reward so that every completion has a non-zero advantage (both trainers do full work)."""
    return text.count("e") / max(len(text), 1)


# ---------------------------------------------------------------------------- ours
class _PromptTask:
    def __init__(self, agents):
        self.agents = agents

    def __len__(self):
        return 1

    def task_id(self, index):
        return "bench/0"

    def prompt(self, index, agent):
        return PROMPT

    def evaluate(self, index, replies):
        from llm_coop_envs.core import Evaluation, RewardResult

        return Evaluation(RewardResult.from_components({a: share_of_e(r) for a, r in replies.items()}))


def _fixed_length_backend(policies, tokens: int):
    from trainers.generation.transformers_backend import TransformersBackend

    return TransformersBackend(policies, dtype="float32", min_new_tokens=tokens)


def our_trainer(agents: tuple[str, ...], tokens: int, run_dir: str):
    from llm_coop_envs.core import CoopEnv
    from trainers.config import TrainConfig
    from trainers.trainer import Trainer

    cfg = TrainConfig(
        env="bench-v0", model="default", group_size=4, steps=100, lora_r=LORA["r"], lora_alpha=LORA["lora_alpha"],
        sampling={"temperature": 1.0, "max_new_tokens": tokens}, run_dir=run_dir, run_name="ours",
        tensorboard=False, progress_bar=False, log_samples=0, micro_batch_size=8,
    )
    trainer = Trainer(cfg, env=CoopEnv(_PromptTask(agents)))
    trainer.backend = _fixed_length_backend(trainer.policies, tokens)
    return trainer


def time_ours(trainer) -> dict[str, float]:
    metrics = trainer.train_step()
    trainer.step += 1
    return {"step_s": metrics["perf/step_s"], "rollout_s": metrics["perf/rollout_s"], "update_s": metrics["perf/update_s"]}


# ---------------------------------------------------------------------------- TRL
def trl_trainer(tokens: int, run_dir: str):
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trainers.model_cache import resolve_model

    path = resolve_model("default")
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            self._start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter() - self._start)

    timer = StepTimer()
    config = GRPOConfig(
        output_dir=run_dir, per_device_train_batch_size=4, num_generations=4, max_completion_length=tokens,
        generation_kwargs={"min_new_tokens": tokens}, max_steps=100, learning_rate=1e-4, beta=0.0,
        temperature=1.0, top_k=0, use_cpu=True, bf16=False, report_to="none", logging_steps=1000,
        save_strategy="no", disable_tqdm=True,
        gradient_checkpointing=False,  # TRL turns it on by default; off is faster here (and matches ours)
    )
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": PROMPT}]}] * 400)

    def reward(completions, **kwargs):
        return [share_of_e(c[0]["content"] if isinstance(c, list) else c) for c in completions]

    trainer = GRPOTrainer(
        model=model, reward_funcs=reward, args=config, train_dataset=dataset, processing_class=tokenizer,
        peft_config=LoraConfig(task_type="CAUSAL_LM", **LORA), callbacks=[timer],
    )
    return trainer, timer


def time_trl(steps: int, tokens: int, run_dir: str) -> list[float]:
    trainer, timer = trl_trainer(tokens, run_dir)
    trainer.args.max_steps = steps
    trainer.train()
    return timer.times


# ---------------------------------------------------------------------------- generation and memory
def time_generation(tokens: int, repeats: int) -> dict[str, float]:
    from trainers.config import SamplingConfig
    from trainers.generation.base import GenerationRequest

    trainer = our_trainer(("helper", "main"), tokens, "/tmp/llm-coop-bench")
    sampling = SamplingConfig(temperature=1.0, max_new_tokens=tokens)
    requests = [GenerationRequest(a, PROMPT, 4, sampling) for a in ("helper", "main")]
    backend = trainer.backend
    backend.generate(requests[:1])  # warm-up
    batched, per_agent = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        backend.generate(requests)
        batched.append(time.perf_counter() - start)
        start = time.perf_counter()
        for request in requests:
            backend.generate([request])
        per_agent.append(time.perf_counter() - start)
    return {"batched_s": statistics.median(batched), "per_agent_s": statistics.median(per_agent)}


def memory_child(num_agents: int, tokens: int) -> None:
    agents = ("helper", "main")[:num_agents]
    trainer = our_trainer(agents, tokens, "/tmp/llm-coop-bench")
    time_ours(trainer)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"agents": num_agents, "peak_mb": peak_mb}))


def measure_memory(tokens: int) -> dict[int, float]:
    peaks = {}
    for agents in (1, 2):
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.trainer_step", "--memory-child", str(agents), "--tokens", str(tokens)],
            capture_output=True, text=True, check=True,
        ).stdout
        peaks[agents] = json.loads(out.strip().splitlines()[-1])["peak_mb"]
    return peaks


# ---------------------------------------------------------------------------- report
def report(load: tuple[float, ...], command: str, tokens: int, ours: list[Mapping[str, float]], trl: list[float] | None,
           trl_error: str | None, generation: Mapping[str, float], memory: Mapping[int, float]) -> str:
    import torch
    import transformers

    ours_s = statistics.median(o["step_s"] for o in ours)
    from trainers.model_cache import model_label

    lines = [
        "# Trainer step: speed and memory", "",
        f"Command: `{command}`", "",
        f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}, transformers {transformers.__version__}, Python {platform.python_version()}.",
        f"Load average (1 min) at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}.", "",
        f"Settings, identical for both trainers: {model_label('default')}, fp32 weights and compute, LoRA r=8, "
        "alpha 16, no dropout, on q/k/v/o; one prompt per step (the same short coding prompt, chat template); "
        f"G=4 completions per prompt and agent, exactly {tokens} new tokens each (end-of-sequence suppressed "
        "until then), temperature 1.0, top_k off, top_p 1.0; lr 1e-4, no KL (beta 0), one optimizer step per "
        "generation, no gradient checkpointing (TRL's default is on; off is faster on this CPU). Ours trains "
        "2 agents (8 completions), TRL 1 agent (4 completions). "
        "Median of the timed steps after one warm-up step.", "",
        "| measurement | value | target |", "|---|---:|---|",
        f"| ours: one MAGRPO step, 2 agents × G=4 | {ours_s:.1f} s "
        f"(rollout {statistics.median(o['rollout_s'] for o in ours):.1f} s, "
        f"update {statistics.median(o['update_s'] for o in ours):.1f} s) | |",
    ]
    if trl:
        trl_s = statistics.median(trl)
        lines.append(f"| TRL GRPOTrainer: one step, 1 agent × G=4 | {trl_s:.1f} s | |")
        lines.append(f"| ratio ours / TRL | **{ours_s / trl_s:.2f}×** | ≤ 1.6× |")
    else:
        lines.append(f"| TRL GRPOTrainer | not measured: {trl_error} | |")
    speedup = generation["per_agent_s"] / generation["batched_s"]
    lines += [
        f"| generation, both agents batched (8 rows) | {generation['batched_s']:.1f} s "
        f"({8 * tokens / generation['batched_s']:.0f} tokens/s) | |",
        f"| generation, per agent in turn (2 × 4 rows) | {generation['per_agent_s']:.1f} s "
        f"({8 * tokens / generation['per_agent_s']:.0f} tokens/s) | |",
        f"| batched speed-up | **{speedup:.2f}×** | ≥ 1.5× |",
        f"| peak RSS, 1 agent | {memory[1]:.0f} MB | |",
        f"| peak RSS, 2 agents on a shared base | {memory[2]:.0f} MB | |",
        f"| memory ratio 2 / 1 | **{memory[2] / memory[1]:.2f}×** | ≤ 1.3× |",
        "",
        "Timings on a shared 2-core machine are noisy; the ratios come from measurements taken in the same run.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per completion")
    parser.add_argument("--steps", type=int, default=2, help="timed steps per trainer (after one warm-up)")
    parser.add_argument("--quick", action="store_true", help="16 tokens, 1 timed step")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.tokens, args.steps = 16, 1
    if args.memory_child:
        memory_child(args.memory_child, args.tokens)
        return 0
    command = "python -m benchmarks.trainer_step " + " ".join(sys.argv[1:] if argv is None else argv)
    load = os.getloadavg()
    memory = measure_memory(args.tokens)
    generation = time_generation(args.tokens, repeats=max(args.steps, 1))
    ours_trainer = our_trainer(("helper", "main"), args.tokens, "/tmp/llm-coop-bench")
    trl_times, trl_error, ours = None, None, []
    try:
        trl_times = time_trl(args.steps + 1, args.tokens, "/tmp/llm-coop-bench-trl")[1:]
    except ImportError as error:
        trl_error = f"TRL not installed ({error}); pip install trl"
    time_ours(ours_trainer)  # warm-up
    for _ in range(args.steps):
        ours.append(time_ours(ours_trainer))
    text = report(load, command, args.tokens, ours, trl_times, trl_error, generation, memory)
    target = RESULTS.with_name("trainer_step_quick.md") if args.quick else RESULTS  # a smoke run keeps the real figures
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
