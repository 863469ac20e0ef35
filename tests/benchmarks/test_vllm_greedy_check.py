"""The GPU check script's plumbing, on a CPU with the stand-in ``vllm`` module: it builds both
backends from a model folder, compares both agents before and after an update, and reports honestly
(the stand-in's replies are not the model's, so every row differs and the exit status is 1)."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from benchmarks.perf import vllm_greedy_check  # noqa: E402
from tests.trainers.conftest import build_model, build_tokenizer  # noqa: E402
from tests.trainers.vllm_standins import fake_vllm_modules  # noqa: E402


def test_check_compares_both_agents_before_and_after_an_update(tmp_path, monkeypatch):
    for name, module in fake_vllm_modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    tokenizer = build_tokenizer()
    build_model(tokenizer).save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    out = tmp_path / "report.md"
    status = vllm_greedy_check.main(["--model", str(tmp_path / "base"), "--device", "cpu", "--tokens", "6",
                                     "--out", str(out)])
    rows = json.loads(out.read_text().split("```json\n")[1].split("\n```")[0])
    assert [(r["round"], r["agent"]) for r in rows] == [
        ("initial adapters", "helper"), ("initial adapters", "main"),
        ("after one update", "helper"), ("after one update", "main"),
    ]
    assert status == 1 and not any(r["equal"] for r in rows)
    assert all(len(r["transformers"]) >= 1 and len(r["vllm"]) >= 1 for r in rows)
    assert sys.modules["vllm"].LLM.instances[-1].model == str(tmp_path / "base")
