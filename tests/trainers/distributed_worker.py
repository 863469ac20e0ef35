"""Run by test_distributed.py, alone or under ``accelerate launch --multi_gpu --num_processes 2``: train
the letters task with a tiny model and write each rank's view (``rank-<i>.json``) and the first rank's
tensors before and after training (``initial.pt``, ``weights.pt``) to the output folder.

``--scripted`` replaces sampling by fixed replies that depend only on the problem and the sample
index, so a 2-process run (1 problem each) and a 1-process run (2 problems) see the same global
batch: what is compared is the update, not the sampler."""

import argparse
import json
import os
import re
import signal
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llm_coop_envs.core import CoopEnv  # noqa: E402
from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config  # noqa: E402
from trainers import register_algorithm  # noqa: E402
from trainers.algorithms.magrpo import MAGRPO  # noqa: E402
from trainers.generation.base import Completion  # noqa: E402
from trainers.trainer import Trainer  # noqa: E402


class ScriptedReplies:
    """Reply g to problem p is ``g + p`` letters 'a' among 'b's: graded rewards, no randomness."""

    def __init__(self, policies):
        self.policies = policies

    def generate(self, requests):
        results = []
        for request in requests:
            problem = int(re.search(r"Problem (\d+)", request.observation).group(1))
            prompt = self.policies.prompt_ids(request.agent, request.observation)
            tokenizer = self.policies.slots[request.agent].tokenizer
            replies = []
            for g in range(request.num_samples):
                text = "a" * (g + problem % 3) + "b" * (4 - g)
                ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                replies.append(Completion(text, prompt, tuple(ids)))
            results.append(replies)
        return results

    def sync_weights(self):
        pass


def shard_view(trainer):
    """Per key: how many of its trained tensors are DTensors, and how many elements this rank holds of
    how many in all (FSDP shards; a replica holds everything)."""
    from torch.distributed.tensor import DTensor

    view = {}
    for key in trainer.policies.keys:
        params = list(trainer.policies.named_trainable(key).values())
        local = sum((p.to_local() if isinstance(p, DTensor) else p).numel() for p in params)
        view[key] = {"dtensors": sum(isinstance(p, DTensor) for p in params), "tensors": len(params),
                     "local": local, "total": sum(p.numel() for p in params)}
    return view


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--run-name", default="run")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--problems", type=int, default=1, help="problems_per_step (per process)")
    parser.add_argument("--scripted", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--full", action="store_true", help="full fine-tuning, one model per agent")
    parser.add_argument("--ctrl-c-on-rank", type=int, default=None, help="this rank alone gets a Ctrl-C in step 1")
    parser.add_argument("--critic", default=None, help="train with this actor-critic (an owned value head): mappo, iac, maac")
    parser.add_argument("--nan-on-rank", type=int, default=None, help="this rank alone has a NaN loss in step 2")
    parser.add_argument("--minibatch", type=int, default=None, help="algo_kwargs.minibatch_size, with 2 updates per rollout")
    parser.add_argument("--turns", type=int, default=1, help="turns per episode (a solved episode ends early)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out_dir)

    rank = int(os.environ.get("RANK", "0"))

    @register_algorithm("magrpo_faults")
    class Faults(MAGRPO):
        """MAGRPO, with a Ctrl-C or a NaN loss on one rank when asked."""

        calls = 0

        def loss(self, batch):
            Faults.calls += 1
            if Faults.calls == 1 and rank == args.ctrl_c_on_rank:
                signal.raise_signal(signal.SIGINT)
            if trainer.step == 1 and rank == args.nan_on_rank:
                return super().loss(batch) * float("nan")
            return super().loss(batch)

    tokenizer = build_tokenizer()
    cfg = tiny_config(out, run_name=args.run_name, steps=args.steps, problems_per_step=args.problems,
                      resume=args.resume, save_every=0 if args.ctrl_c_on_rank is not None else 1, log_samples=1,
                      micro_batch_size=3, algo=args.critic or "magrpo_faults",
                      algo_kwargs={"value_lr": 0.1} if args.critic else (
                          {"minibatch_size": args.minibatch, "updates_per_rollout": 2} if args.minibatch else {}),
                      **(dict(lora_r=0, policy="separate", learning_rate=1e-2) if args.full else {}))
    trainer = Trainer(cfg, env=CoopEnv(LetterTask(), num_turns=args.turns), models=(build_model(tokenizer), tokenizer),
                      backend=ScriptedReplies if args.scripted else None)
    depths = []  # per step: the depth of each of this rank's groups (the shape of its trees)
    training_items = trainer.training_items
    trainer.training_items = lambda groups: (depths.append([g.depth for g in groups]), training_items(groups))[1]
    seeds = [trainer.problem_seed(i) for i in range(args.problems)]
    initial = {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}  # every rank: FSDP gathers
    if trainer.dist.is_main:
        torch.save(initial, out / "initial.pt")
    error = None
    try:
        trainer.train()
    except KeyboardInterrupt:
        pass
    except FloatingPointError as raised:
        error = str(raised)
    # train() ended by exporting final/ on every rank (FSDP gathers the shards), as the command line does
    weights = {key: trainer.policies.state_dict(key) for key in trainer.policies.keys}  # FSDP gathers: before close
    shards = shard_view(trainer)
    trainer.close()  # the last collective: every rank leaves the process group
    sums = {key: float(sum(t.double().sum() for t in tensors.values())) for key, tensors in weights.items()}
    view = {"depths": depths, "rank": trainer.dist.rank, "step": trainer.step, "error": error, "world": trainer.dist.world_size, "seeds": seeds, "sums": sums,
            "history": trainer.history,
            "modules": sorted({type(m).__name__ for m in trainer.policies.training_modules.values()}),
            "shards": shards,
            "owned": {name: [type(m).__name__, [float(v) for v in torch.nn.utils.parameters_to_vector(m.parameters())]]
                      for name, m in trainer.owned_modules.items()}}
    (out / f"rank-{trainer.dist.rank}.json").write_text(json.dumps(view), encoding="utf-8")
    if trainer.dist.is_main:
        torch.save(weights, out / "weights.pt")


if __name__ == "__main__":
    main()
