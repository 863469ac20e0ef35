"""``python -m benchmarks.perf.trainer_step``: speed and memory of one MAGRPO step, side by side.

Three comparisons, each in one run on the same machine, SmolLM2-135M-Instruct with LoRA r=8 on q/k/v/o:

1. **step time**: one MAGRPO step with 2 agents × G=4 (ours) against one single-agent step of
   Hugging Face TRL's ``GRPOTrainer`` with the same model, G, prompt, completion length and LoRA.
   Both generate exactly ``--tokens`` new tokens per completion (``min_new_tokens``) so the work matches.
   Target: ours ≤ 0.6 × TRL (0.5× the stretch).
2. **peak memory** (max RSS of a fresh process): 2 agents on one shared base vs 1 agent. Target ≤ 1.1×.
3. **generation**: both agents' G samples in one batched call of our backend (per-row adapters) vs
   what a user would otherwise write: per agent in turn, peft's ``set_adapter`` then plain
   ``transformers`` ``model.generate`` on G copies of the prompt, with the same sampling settings and
   the same number of new tokens. Target ≥ 3× faster. For reference also our backend per agent in turn.
4. **profile** of both generations: where a decode step's time goes (torch profiler).

Every measurement is repeated (``--repeats``, at least 3): each ratio is formed within one repeat
(ours and TRL's i-th timed steps; batched and per-agent generation back to back; 1 and 2 agents'
memory) and the report gives the median and range of the per-repeat ratios, with ``uptime`` at the
start and end. Results go to ``benchmarks/results/trainer_step.md`` (``--quick``, a 16-token smoke
run, writes ``trainer_step_quick.md`` instead). The full run (128 tokens, 3 repeats) takes ~15 minutes
on 2 quiet cores.
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

RESULTS = Path(__file__).resolve().parents[1] / "results" / "trainer_step.md"
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


def our_trainer(agents: tuple[str, ...], tokens: int, run_dir: str, cpu_threads: int | str = "auto"):
    from llm_coop_envs.core import CoopEnv
    from trainers.config import TrainConfig
    from trainers.trainer import Trainer

    cfg = TrainConfig(
        env="bench-v0", model="default", group_size=4, steps=100, lora_r=LORA["r"], lora_alpha=LORA["lora_alpha"],
        sampling={"temperature": 1.0, "max_new_tokens": tokens}, run_dir=run_dir, run_name="ours",
        tensorboard=False, progress_bar=False, log_samples=0, micro_batch_size=8, cpu_threads=cpu_threads,
    )
    return Trainer(cfg, env=CoopEnv(_PromptTask(agents)), backend=lambda policies: _fixed_length_backend(policies, tokens))


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

    from llm_coop_envs.lm.cache import resolve_model

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
def time_generation(tokens: int, repeats: int) -> dict[str, list[float]]:
    """Seconds per repeat: both agents batched (ours), per agent in turn with ``model.generate``, and
    per agent in turn with our backend."""
    trainer = our_trainer(("helper", "main"), tokens, "/tmp/llm-coop-bench")
    requests = _generation_requests(tokens)
    backend = trainer.backend
    backend.generate(requests[:1])  # warm-up
    _hf_generate(trainer, requests[0], 2)  # warm-up
    times: dict[str, list[float]] = {"batched": [], "per_agent_generate": [], "per_agent_ours": []}
    for _ in range(repeats):
        times["batched"].append(_seconds(lambda: backend.generate(requests)))
        times["per_agent_generate"].append(_seconds(lambda: [_hf_generate(trainer, r, tokens) for r in requests]))
        times["per_agent_ours"].append(_seconds(lambda: [backend.generate([r]) for r in requests]))
    return times


def _generation_requests(tokens: int):
    from trainers.config import SamplingConfig
    from trainers.generation.base import GenerationRequest

    sampling = SamplingConfig(temperature=1.0, max_new_tokens=tokens)
    return [GenerationRequest(a, PROMPT, 4, sampling) for a in ("helper", "main")]


def _hf_generate(trainer, request, tokens: int):
    """One agent's G samples the plain way: ``set_adapter`` to its adapter, ``model.generate`` on G copies
    of the prompt (sampling at temperature 1, no top-k/top-p, exactly ``tokens`` new tokens)."""
    import torch

    slot = trainer.policies.activate(request.agent)
    prompt = torch.tensor([trainer.policies.prompt_ids(request.agent, request.observation)] * request.num_samples)
    with torch.no_grad():
        return slot.model.generate(
            input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True, temperature=1.0, top_k=0,
            top_p=1.0, min_new_tokens=tokens, max_new_tokens=tokens, pad_token_id=slot.tokenizer.pad_token_id,
        )


def _seconds(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


# Profiler operators grouped by what they do in a decode step.
_PROFILE_GROUPS = {
    "weights (linear layers, lm_head)": ("aten::mm", "aten::addmm", "aten::linear", "aten::matmul",
                                         "mkldnn::_linear_pointwise"),
    "per-row LoRA (bmm)": ("aten::bmm",),
    "attention": ("aten::_scaled_dot_product_flash_attention_for_cpu", "aten::scaled_dot_product_attention",
                  "aten::_scaled_dot_product_attention_math"),
    "KV cache and row copies (cat, copy, index)": ("aten::cat", "aten::copy_", "aten::index", "aten::index_select",
                                                   "aten::slice_scatter", "aten::index_put_"),
    "sampling (softmax, draws, cumsum)": ("aten::exponential_", "aten::_log_softmax", "aten::_softmax", "aten::argmax",
                                          "aten::exp", "aten::div", "aten::sort", "aten::cumsum", "aten::gather",
                                          "aten::uniform_", "aten::searchsorted", "aten::multinomial"),
}


def profile_generation(tokens: int) -> dict[str, dict[str, float]]:
    """Milliseconds per forward step (the prefill included) by operator group, under the torch profiler:
    our batched generation (8 rows, ``tokens`` steps) and ``model.generate`` per agent in turn (4 rows,
    2 × ``tokens`` steps). What no operator accounts for is Python and dispatch overhead."""
    trainer = our_trainer(("helper", "main"), tokens, "/tmp/llm-coop-bench")
    requests = _generation_requests(tokens)
    trainer.backend.generate(requests)  # warm-up
    _hf_generate(trainer, requests[0], 2)
    return {
        "ours, both agents batched (8 rows)": _profile(lambda: trainer.backend.generate(requests), tokens),
        "`model.generate` per agent (4 rows)": _profile(
            lambda: [_hf_generate(trainer, r, tokens) for r in requests], 2 * tokens),
    }


def _profile(work, steps: int) -> dict[str, float]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        wall = _seconds(work)
    groups = dict.fromkeys([*_PROFILE_GROUPS, "other operators"], 0.0)
    for event in prof.key_averages():
        group = next((g for g, names in _PROFILE_GROUPS.items() if event.key in names), "other operators")
        groups[group] += event.self_cpu_time_total / 1000 / steps
    groups["Python and dispatch (no operator)"] = max(wall * 1000 / steps - sum(groups.values()), 0.0)
    groups["total (wall, under the profiler)"] = wall * 1000 / steps
    return groups


def memory_child(num_agents: int, tokens: int) -> None:
    agents = ("helper", "main")[:num_agents]
    trainer = our_trainer(agents, tokens, "/tmp/llm-coop-bench")
    time_ours(trainer)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"agents": num_agents, "peak_mb": peak_mb}))


def measure_memory(tokens: int, repeats: int) -> dict[int, list[float]]:
    """Peak RSS in MB of a fresh process running one step, with 1 and with 2 agents, per repeat."""
    peaks: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeats):
        for agents in (1, 2):
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.perf.trainer_step", "--memory-child", str(agents), "--tokens", str(tokens)],
                capture_output=True, text=True, check=True,
            ).stdout
            peaks[agents].append(json.loads(out.strip().splitlines()[-1])["peak_mb"])
    return peaks


# ---------------------------------------------------------------------------- report
def spread(values: list[float], unit: str = "×", digits: int = 2) -> str:
    """``median (min–max)`` of per-repeat values."""
    return (f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}–{max(values):.{digits}f}{unit}, "
            f"{len(values)} repeats)")


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def report(uptimes: tuple[str, str], command: str, tokens: int, ours: list[Mapping[str, float]],
           trl: list[float] | None, trl_error: str | None, generation: Mapping[str, list[float]],
           memory: Mapping[int, list[float]], profile: Mapping[str, Mapping[str, float]], quick: bool = False) -> str:
    import torch
    import transformers

    step_s = [o["step_s"] for o in ours]
    from llm_coop_envs.lm.cache import model_label

    lines = [
        "# Trainer step: speed and memory", "",
        *(["A 16-token smoke run (`--quick`): it checks that the benchmark runs; its figures are not results.", ""]
          if quick else []),
        f"Command: `{command}`", "",
        f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}, transformers {transformers.__version__}, Python {platform.python_version()}.",
        f"`uptime` at start: `{uptimes[0]}`; at end: `{uptimes[1]}`.", "",
        f"Settings, identical for both trainers: {model_label('default')}, fp32 weights and compute, LoRA r=8, "
        "alpha 16, no dropout, on q/k/v/o; one prompt per step (the same short coding prompt, chat template); "
        f"G=4 completions per prompt and agent, exactly {tokens} new tokens each (end-of-sequence suppressed "
        "until then), temperature 1.0, top_k off, top_p 1.0; lr 1e-4, no KL (beta 0), one optimizer step per "
        "generation, no gradient checkpointing (TRL's default is on; off is faster on this CPU). Ours trains "
        "2 agents (8 completions), TRL 1 agent (4 completions). Each trainer takes one warm-up step, then "
        f"{len(ours)} timed steps; ratios are formed per repeat (ours' i-th step / TRL's i-th step, generation "
        "batched and per agent back to back, memory of 1 and 2 agents) and given as median (range).", "",
        "| measurement | value (median (range)) | target |", "|---|---:|---|",
        f"| ours: one MAGRPO step, 2 agents × G=4 | {spread(step_s, ' s', 1)} "
        f"(rollout {statistics.median(o['rollout_s'] for o in ours):.1f} s, "
        f"update {statistics.median(o['update_s'] for o in ours):.1f} s) | |",
    ]
    if trl:
        lines.append(f"| TRL GRPOTrainer: one step, 1 agent × G=4 | {spread(trl, ' s', 1)} | |")
        lines.append(f"| ratio ours / TRL | **{spread([o / t for o, t in zip(step_s, trl)])}** | ≤ 0.6× |")
    else:
        lines.append(f"| TRL GRPOTrainer | not measured: {trl_error} | |")
    batched, hf, ours_per_agent = generation["batched"], generation["per_agent_generate"], generation["per_agent_ours"]
    lines += [
        f"| generation, both agents batched, our backend (8 rows) | {spread(batched, ' s', 1)}, "
        f"{8 * tokens / statistics.median(batched):.0f} tokens/s | |",
        f"| generation, per agent in turn: `set_adapter` + `model.generate` (2 × 4 rows) | {spread(hf, ' s', 1)}, "
        f"{8 * tokens / statistics.median(hf):.0f} tokens/s | |",
        f"| batched speed-up over per agent in turn | **{spread([h / b for h, b in zip(hf, batched)])}** | ≥ 3× |",
        f"| reference: per agent in turn with our backend (2 × 4 rows) | {spread(ours_per_agent, ' s', 1)}, "
        f"{8 * tokens / statistics.median(ours_per_agent):.0f} tokens/s | |",
        f"| batched speed-up over our backend per agent | {spread([p / b for p, b in zip(ours_per_agent, batched)])} | |",
        f"| peak RSS, 1 agent | {spread(memory[1], ' MB', 0)} | |",
        f"| peak RSS, 2 agents on a shared base | {spread(memory[2], ' MB', 0)} | |",
        f"| memory ratio 2 / 1 | **{spread([two / one for one, two in zip(memory[1], memory[2])])}** | ≤ 1.1× |",
        "",
        "## Where a decode step's time goes",
        "",
        f"Both agents' generation ({tokens} new tokens per row) under the torch profiler: self time of each "
        "operator group per forward step (ours: one step serves all 8 rows; `model.generate` per agent: "
        "one step serves one agent's 4 rows, twice as many steps), prefill included (the profiler adds its "
        "own overhead to every operator):",
        "",
        "| group | " + " | ".join(f"{name}: ms per step (share)" for name in profile) + " |",
        "|---|" + "---:|" * len(profile),
    ]
    columns = list(profile.values())
    for group in columns[0]:
        cells = [f"{c[group]:.1f} ({100 * c[group] / c['total (wall, under the profiler)']:.0f} %)" for c in columns]
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    lines += ["", "Timings on a shared 2-core machine are noisy; the ratios come from measurements taken in the same run."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per completion")
    parser.add_argument("--repeats", type=int, default=3, help="timed steps per trainer and repeats of every measurement")
    parser.add_argument("--steps", type=int, help=argparse.SUPPRESS)  # renamed --repeats: said, not taken
    parser.add_argument("--quick", action="store_true", help="16 tokens (3 repeats)")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps is not None:
        parser.error("--steps is now --repeats")
    if args.quick:
        args.tokens = 16
    if args.memory_child:
        memory_child(args.memory_child, args.tokens)
        return 0
    if args.repeats < 3:
        parser.error("--repeats must be at least 3 (the report gives a median and range)")
    threads = f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} " if "OMP_NUM_THREADS" in os.environ else ""
    command = f"{threads}python -m benchmarks.perf.trainer_step " + " ".join(sys.argv[1:] if argv is None else argv)
    started = uptime()
    memory = measure_memory(args.tokens, args.repeats)
    generation = time_generation(args.tokens, args.repeats)
    profile = profile_generation(args.tokens)
    trl_times, trl_error = None, None
    try:
        trl_times = time_trl(args.repeats + 1, args.tokens, "/tmp/llm-coop-bench-trl")[1:]
    except ImportError as error:
        trl_error = f"TRL not installed ({error}); pip install trl"
    ours_trainer = our_trainer(("helper", "main"), args.tokens, "/tmp/llm-coop-bench")
    time_ours(ours_trainer)  # warm-up
    ours = [time_ours(ours_trainer) for _ in range(args.repeats)]
    text = report((started, uptime()), command, args.tokens, ours, trl_times, trl_error, generation, memory, profile, args.quick)
    target = RESULTS.with_name("trainer_step_quick.md") if args.quick else RESULTS  # a smoke run keeps the real figures
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
