"""Saved adapters carry a filled model card: what trained them, on what, from which base, the line
that loads them, and no path of the machine that trained them."""

from __future__ import annotations

import json

from llm_coop_envs.lm.cache import PACKAGED_MODEL_ID
from trainers.provenance import write_provenance

RECORD = {"package_version": "0.1.0", "model": {"id": PACKAGED_MODEL_ID, "label": "SmolLM2 (packaged build)"},
          "env": {"id": "mbpp-v1", "kwargs": {"data_path": "/home/someone/rows.jsonl", "num_turns": 2}},
          "algorithm": {"import_path": "win_rate:WinRate", "options": {}}}


def _adapter(folder, agent):
    (folder / agent).mkdir(parents=True)
    (folder / agent / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "/root/.cache/x"}))
    (folder / agent / "README.md").write_text("---\nbase_model: /root/.cache/x\n---\n[More Information Needed]\n")


def test_the_card_is_filled_and_names_no_local_path(tmp_path):
    _adapter(tmp_path, "helper")
    write_provenance(tmp_path, RECORD)
    card = (tmp_path / "helper" / "README.md").read_text()
    assert "More Information Needed" not in card and "/root" not in card and "/home" not in card
    assert "`win_rate:WinRate`" in card and "`mbpp-v1`" in card and '"rows.jsonl"' in card
    assert f'resolve_model("{PACKAGED_MODEL_ID}")' in card and "PeftModel.from_pretrained" in card
    assert json.loads((tmp_path / "helper" / "adapter_config.json").read_text())["base_model_name_or_path"] == PACKAGED_MODEL_ID


def test_a_hub_base_loads_with_peft_alone(tmp_path):
    _adapter(tmp_path, "main")
    write_provenance(tmp_path, {**RECORD, "model": {"id": "Qwen/Qwen2.5-0.5B", "label": "Qwen/Qwen2.5-0.5B"}})
    card = (tmp_path / "main" / "README.md").read_text()
    assert "base_model: Qwen/Qwen2.5-0.5B" in card and 'AutoPeftModelForCausalLM.from_pretrained("main")' in card
