"""The Accelerate configs under configs/accelerate parse with Accelerate's own loader (which rejects
unknown keys), say what their names say, and are documented. ddp_one_node.yaml, fsdp2_lora.yaml and
fsdp2_full.yaml are also launched here (on CPU processes, test_distributed.py); the others need GPUs
(or DeepSpeed, which the trainer refuses) and are not run in CI."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs" / "accelerate").glob("*.yaml"))
EXPECTED = {
    "single_gpu": ("NO", 1, 1), "ddp_one_node": ("MULTI_GPU", 8, 1), "ddp_multi_node": ("MULTI_GPU", 16, 2),
    "fsdp2_lora": ("FSDP", 8, 1), "fsdp2_full": ("FSDP", 8, 1),
    "deepspeed_zero2": ("DEEPSPEED", 8, 1), "deepspeed_zero3": ("DEEPSPEED", 8, 1),
}


def test_every_config_is_expected():
    assert sorted(p.stem for p in CONFIGS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_parses_with_accelerates_loader(path):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(path))
    kind, processes, machines = EXPECTED[path.stem]
    assert str(config.distributed_type).split(".")[-1] == kind
    assert (config.num_processes, config.num_machines) == (processes, machines)
    assert config.mixed_precision == "no"  # precision is the trainer's (train_dtype, generation_dtype)
    if kind == "FSDP":
        assert config.fsdp_config["fsdp_version"] == 2
    if kind == "DEEPSPEED":
        assert config.deepspeed_config["zero_stage"] == int(path.stem[-1])
    if machines > 1:
        assert config.main_process_ip and config.main_process_port
    assert path.name in (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
