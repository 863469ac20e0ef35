"""The vLLM settings of TrainConfig: accepted when coherent, refused with a message that names the fix."""

from __future__ import annotations

import pytest

from trainers.config import load_config


def test_server_mode_with_url_is_accepted():
    cfg = load_config(overrides=["backend=vllm", "vllm_mode=server", "vllm_url=http://gen-node:8000",
                                 "vllm_max_loras=4", "vllm_adapter_dir=/shared/adapters"])
    assert (cfg.vllm_mode, cfg.vllm_url, cfg.vllm_max_loras) == ("server", "http://gen-node:8000", 4)


def test_defaults_are_the_colocated_engine():
    cfg = load_config(overrides=["backend=vllm"])
    assert cfg.vllm_mode == "colocate" and cfg.vllm_url is None and cfg.vllm_gpu_memory_fraction == 0.3


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["vllm_mode=remote"], "vllm_mode must be one of"),
        (["vllm_mode=server"], "needs vllm_url"),
        (["vllm_mode=server", "vllm_url=gen-node:8000"], "must start with http"),
        (["vllm_url=http://gen-node:8000"], "only used with vllm_mode=server"),
        (["vllm_gpu_memory_fraction=1.5"], r"vllm_gpu_memory_fraction must be in \(0, 1\]"),
        (["vllm_gpu_memory_fraction=0"], r"vllm_gpu_memory_fraction must be in \(0, 1\]"),
        (["vllm_max_loras=0"], "vllm_max_loras must be >= 1"),
        (["vllm_timeout_s=0"], "vllm_timeout_s must be > 0"),
        (["backend=vllm", "lora_r=0", "policy=separate"], "full fine-tuning"),
    ],
)
def test_incoherent_vllm_settings_are_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(overrides=overrides)
