"""Run by test_runs.py in a subprocess: train the letters task with a tiny model through the public API
(``Trainer``/``TrainConfig``), checkpointing every step. With ``--kill-at N`` the process SIGKILLs
itself inside the N-th call of the algorithm's loss (mid-update: earlier agents of that step may
already be updated). At the end it writes every agent's trained tensors to ``--weights``."""

import argparse
import os
import signal
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llm_coop_envs.core import CoopEnv  # noqa: E402
from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config  # noqa: E402
from trainers import register_algorithm  # noqa: E402
from trainers.algorithms.magrpo import MAGRPO  # noqa: E402
from trainers.trainer import Trainer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--run-name", required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--kill-at", type=int, default=0)
    parser.add_argument("--weights", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    calls = [0]

    @register_algorithm("magrpo_killed")
    class KilledMAGRPO(MAGRPO):
        def loss(self, batch):
            calls[0] += 1
            if calls[0] == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().loss(batch)

    tokenizer = build_tokenizer()
    cfg = tiny_config(Path(args.run_dir), run_name=args.run_name, steps=args.steps, save_every=1,
                      resume=args.resume, algo="magrpo_killed", log_samples=1)
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    trainer.train()
    trainer.close()
    if args.weights:
        torch.save({key: trainer.policies.state_dict(key) for key in trainer.policies.keys}, args.weights)


if __name__ == "__main__":
    main()
