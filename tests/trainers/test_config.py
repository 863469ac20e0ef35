import dataclasses

import pytest

from trainers.config import (
    PRESETS, SamplingConfig, TrainConfig, config_sections, describe_fields, load_config, parse_override,
)


def test_overrides_reach_nested_fields():
    cfg = load_config(preset="cpu-demo", overrides=["steps=2", "sampling.temperature=0.5", "agent_sampling.main.top_p=0.9"])
    assert cfg.steps == 2 and cfg.sampling.temperature == 0.5
    assert cfg.sampling_for("main").top_p == 0.9 and cfg.sampling_for("helper").top_p == PRESETS["cpu-demo"]["sampling"]["top_p"]
    assert cfg.sampling.max_new_tokens == PRESETS["cpu-demo"]["sampling"]["max_new_tokens"]


def test_yaml_and_toml_files(tmp_path):
    (tmp_path / "c.yaml").write_text("algo: grpo\nenv_kwargs:\n  num_turns: 2\nsampling:\n  stop: ['###']\n")
    cfg = load_config(tmp_path / "c.yaml", overrides=["group_size=3"])
    assert cfg.algo == "grpo" and cfg.env_kwargs == {"num_turns": 2} and cfg.sampling.stop == ("###",)
    assert cfg.group_size == 3
    (tmp_path / "c.toml").write_text('joint_mode = "cross"\n[sampling]\ntemperature = 0.3\n')
    cfg = load_config(tmp_path / "c.toml")
    assert cfg.joint_mode == "cross" and cfg.sampling == SamplingConfig(temperature=0.3)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"joint_mode": "diag"}, "joint_mode"),
        ({"group_size": 1}, "group_size"),
        ({"lora_r": 0}, "policy=separate"),
        ({"agent_models": {"a": "x"}}, "policy=separate"),
        ({"sampling": {"top_p": 0}}, "top_p"),
        ({"agent_sampling": {"a": {"temp": 1}}}, "unknown field"),
    ],
)
def test_invalid_values_say_how_to_fix(fields, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**fields)


def test_unknown_keys_and_bad_overrides():
    with pytest.raises(ValueError, match="Unknown config field"):
        load_config(overrides=["stepz=3"])
    with pytest.raises(ValueError, match="key=value"):
        parse_override("steps")
    with pytest.raises(ValueError, match="preset"):
        load_config(preset="gpu-monster")


def test_every_field_is_documented_in_one_section():
    sections = config_sections()
    listed = [name for _, names in sections.values() for name in names]
    assert listed == [f.name for f in dataclasses.fields(TrainConfig)]  # each field once, in the dataclass's order
    assert {"run", "sampling", "model and LoRA", "vLLM", "logging", "checkpoints"} <= set(sections)
    assert all(name.startswith("vllm_") for name in sections["vLLM"][1])
    lines = describe_fields().split("\n")
    assert [line for line in lines if line.startswith("[")] == [f"[{name}] {what}" for name, (what, _) in sections.items()]
    for name in listed:
        doc = lines[lines.index(next(line for line in lines if line.startswith(f"  {name} = "))) + 1]
        assert doc.strip(), name


def test_the_keys_the_benchmark_passes_keep_their_meaning():
    overrides = ["seed=1", "group_size=4", "problems_per_step=4", "learning_rate=0.0002", "lora_r=8", "lora_alpha=16",
                 "sampling.temperature=0.6", "sampling.top_p=0.6", "sampling.max_new_tokens=128",
                 "sampling.stop_after_code=true", "env_kwargs.team=single", "env_kwargs.level=1",
                 "eval_env_kwargs={split: test, level: 1}", "cpu_threads=2", "save_every=0", "keep_checkpoints=1",
                 "log_samples=0", "progress_bar=false", "tensorboard=false"]
    cfg = load_config(overrides=overrides, env="coop_procedural-v0", algo="grpo", steps=16, eval_problems=8)
    assert (cfg.seed, cfg.group_size, cfg.problems_per_step, cfg.learning_rate, cfg.lora_r, cfg.lora_alpha) == (
        1, 4, 4, 2e-4, 8, 16)
    assert (cfg.sampling.temperature, cfg.sampling.top_p, cfg.sampling.max_new_tokens, cfg.sampling.stop_after_code) == (
        0.6, 0.6, 128, True)
    assert dict(cfg.env_kwargs) == {"team": "single", "level": 1} and dict(cfg.eval_env_kwargs) == {"split": "test", "level": 1}
    assert (cfg.cpu_threads, cfg.save_every, cfg.keep_checkpoints, cfg.log_samples) == (2, 0, 1, 0)
    assert not cfg.progress_bar and not cfg.tensorboard
