"""Run by ``accelerate launch --multi_gpu --num_processes 2`` from test_distributed.py: train a tiny
model for two steps and print a checksum of each agent's adapter, so the test can compare the replicas."""

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llm_coop_envs.core import CoopEnv  # noqa: E402
from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config  # noqa: E402
from trainers.trainer import Trainer  # noqa: E402


def main(out_dir: str) -> None:
    torch.set_num_threads(1)
    tokenizer = build_tokenizer()
    trainer = Trainer(tiny_config(Path(out_dir), steps=2), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    seeds = [trainer.problem_seed(0)]
    trainer.train()
    sums = {key: float(sum(t.double().sum() for t in trainer.policies.state_dict(key).values())) for key in trainer.policies.keys}
    print("RESULT " + json.dumps({"rank": trainer.dist.rank, "world": trainer.dist.world_size, "sums": sums, "seeds": seeds}))


if __name__ == "__main__":
    main(sys.argv[1])
