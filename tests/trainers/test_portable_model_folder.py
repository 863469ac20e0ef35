"""The pulled default model loads as the same model under every transformers version pyproject.toml
allows. Transformers 5 saves the tokenizer as ``TokenizersBackend`` (transformers 4 refuses it) and the
rotary base inside ``rope_parameters`` (transformers 4 silently uses its default instead), so the cache
is rewritten to say both ways. This file also runs in the lower-bound job (.ci/lower_bounds.sh)."""

from __future__ import annotations

import json

from tests.trainers.conftest import build_tokenizer
from llm_coop_envs.lm.cache import PORTABLE_TOKENIZER_CLASS, make_portable, resolve_model

TEXT = "def add(x, y): return x + y  # helper"
ROPE_THETA = 100000.0  # SmolLM2's; transformers' default is 10,000


def saved_as_transformers_5(folder):
    """The tiny tokenizer and a Llama config, saved with the names transformers 5 writes."""
    from transformers import LlamaConfig

    build_tokenizer().save_pretrained(folder)
    LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4).save_pretrained(folder)
    edit(folder / "tokenizer_config.json", tokenizer_class="TokenizersBackend")
    config = json.loads((folder / "config.json").read_text())
    config.pop("rope_theta", None)
    config.pop("rope_scaling", None)
    config["rope_parameters"] = {"rope_theta": ROPE_THETA, "rope_type": "default"}
    (folder / "config.json").write_text(json.dumps(config))


def edit(path, **changes):
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def rope_theta(config) -> float:
    """The rotary base as the installed transformers reads it (4.x: an attribute; 5.x: in rope_parameters)."""
    theta = getattr(config, "rope_theta", None)
    return theta if theta is not None else config.rope_parameters["rope_theta"]


def test_a_portable_folder_loads_the_same_tokenizer_and_rotary_base(tmp_path):
    from transformers import AutoConfig, AutoTokenizer

    saved_as_transformers_5(tmp_path)
    make_portable(tmp_path)
    assert json.loads((tmp_path / "tokenizer_config.json").read_text())["tokenizer_class"] == PORTABLE_TOKENIZER_CLASS
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded(TEXT)["input_ids"] == build_tokenizer()(TEXT)["input_ids"]
    assert loaded.eos_token == "<|end|>" and loaded.pad_token == "<|pad|>"
    assert rope_theta(AutoConfig.from_pretrained(tmp_path)) == ROPE_THETA


def test_resolving_the_default_model_repairs_a_cache_pulled_before(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_COOP_CACHE", str(tmp_path))
    folder = tmp_path / "models" / "SmolLM2-135M-Instruct"
    folder.mkdir(parents=True)
    saved_as_transformers_5(folder)
    (folder / "model.safetensors").write_bytes(b"")
    assert resolve_model("default", pull=False) == str(folder)
    assert json.loads((folder / "tokenizer_config.json").read_text())["tokenizer_class"] == PORTABLE_TOKENIZER_CLASS
    assert json.loads((folder / "config.json").read_text())["rope_theta"] == ROPE_THETA
    assert not list(folder.glob("*.partial"))


def test_a_portable_folder_is_left_as_it_is(tmp_path):
    saved_as_transformers_5(tmp_path)
    make_portable(tmp_path)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    make_portable(tmp_path)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_a_folder_without_configs_is_left_alone(tmp_path):
    make_portable(tmp_path)
    assert not list(tmp_path.iterdir())
