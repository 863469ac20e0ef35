import pytest

from trainers.config import PRESETS, SamplingConfig, TrainConfig, describe_fields, load_config, parse_override


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


def test_every_field_is_documented():
    text = describe_fields()
    for line in text.split("\n")[1::2]:
        assert line.strip(), text
