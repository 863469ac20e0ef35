"""The run folder names the algorithm that trained: ``Trainer(cfg, algorithm=obj)`` records the
object's class by import path with its options (not the config's ``algo``), and every record carries
the versions of the packages that made it."""

from __future__ import annotations

import json

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, tiny_config
from trainers.algorithms.magrpo import MAGRPO
from trainers.checkpoint import latest_checkpoint
from trainers.trainer import Trainer

PATH = f"{__name__}:ScaledMAGRPO"


class ScaledMAGRPO(MAGRPO):
    """A plug-in with an option of its own."""

    def __init__(self, scale: float = 1.0, **options) -> None:
        super().__init__(**options)
        self.scale = scale


def test_a_plug_in_object_is_recorded_by_import_path_and_options(tmp_path, tokenizer):
    cfg = tiny_config(tmp_path, steps=1, eval_problems=1)  # cfg.algo stays "magrpo"
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), eval_env=CoopEnv(LetterTask()),
                      models=(build_model(tokenizer), tokenizer), algorithm=ScaledMAGRPO(scale=0.5, normalize_std=True))
    trainer.train()
    final = trainer.save_final()
    trainer.close()
    run = tmp_path / "run"
    records = [json.loads((latest_checkpoint(run) / "state.json").read_text())["provenance"],
               json.loads((run / "eval.json").read_text())["provenance"],
               json.loads((final / "provenance.json").read_text())]
    for record in records:
        algorithm = record["algorithm"]
        assert algorithm["import_path"] == PATH
        assert algorithm["options"]["scale"] == 0.5 and algorithm["options"]["normalize_std"] is True
        assert "'magrpo' was not used" in algorithm["note"]
        assert {"llm-coop-envs", "torch", "transformers", "peft", "python"} <= set(record["versions"])
        assert record["versions"]["torch"]


def test_an_algorithm_named_by_the_config_is_recorded_by_its_class(tmp_path, tokenizer):
    cfg = tiny_config(tmp_path, steps=1, algo="grpo", policy="shared", algo_kwargs={"normalize_std": True})
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    trainer.train()
    final = trainer.save_final()
    trainer.close()
    algorithm = json.loads((final / "provenance.json").read_text())["algorithm"]
    assert algorithm["import_path"] == "trainers.algorithms.grpo:GRPO" and "note" not in algorithm
    assert algorithm["options"]["normalize_std"] is True
