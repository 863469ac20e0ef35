"""Untrusted text is data: what a program raises or prints reaches infos and observations capped
and as valid UTF-8."""

from __future__ import annotations

import json

import llm_coop_envs
from llm_coop_envs.sandbox.text import safe_text

HOSTILE_BODY = ("    import os\n"
                "    os.write(1, b'\\xff\\xfe\\x1b[2J' * 1000)\n"
                "    raise ValueError('\\udcff\\ud800' * 5 + 'x' * 10_000_000)\n")


def test_safe_text_replaces_surrogates_and_controls_and_caps() -> None:
    assert safe_text("a\udcffb\x00\x1b\n\t", 100) == "a\ufffdb\ufffd\ufffd\n\t"
    capped = safe_text("y" * 50, 10)
    assert capped.startswith("y" * 10) and "40 characters dropped" in capped
    safe_text("\ud800" * 10, 5).encode("utf-8")


def test_hostile_exception_text_gives_a_normal_step() -> None:
    env = llm_coop_envs.make("mbpp-v1", split="test", num_turns=2)
    env.reset(options={"index": 0})
    main = f"def {env.task.problems[0].entry_point}(*args):\n    aux(0)\n" + HOSTILE_BODY
    observations, rewards, _, _, infos = env.step({"helper": "def aux(x):\n    return x\n",
                                                   "main": main})
    assert infos["main"]["details"]["tests"][0]["error_type"] == "ValueError"
    for text in observations.values():
        text.encode("utf-8")
    json.dumps(infos, ensure_ascii=False, default=str).encode("utf-8")
    assert len(json.dumps(infos, default=str)) < 1_000_000
    assert all(isinstance(r, float) for r in rewards.values())
