"""The worked example of docs/multi_turn.md: a 2-turn coop_humaneval-v2 episode with hand-written replies.

Turn 1 has a bug (the helper tests oddness instead of primality); the tests feedback shows the
failed asserts, and turn 2 fixes it. Regenerate the transcript in the docs page with::

    LLM_COOP_DATA_DIR=../shared/data python -m tests.multiturn.worked_example --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import llm_coop_envs

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "multi_turn.md"
BLOCK = re.compile(r"(<!-- transcript:start -->\n````text\n)(.*?)(\n````\n<!-- transcript:end -->)", re.DOTALL)

TASK_ID = "CoopHumanEval/0"
MAIN = "```python\ndef x_or_y(n, x, y):\n    return x if aux(n) else y\n```"
BUGGY_HELPER = "```python\ndef aux(n):\n    return n % 2 == 1\n```"
FIXED_HELPER = (
    "```python\ndef aux(n):\n    if n < 2:\n        return False\n"
    "    return all(n % d for d in range(2, int(n ** 0.5) + 1))\n```"
)
TURNS = ({"helper": BUGGY_HELPER, "main": MAIN}, {"helper": FIXED_HELPER, "main": MAIN})


def play(**kwargs) -> tuple[object, list[tuple]]:
    """Run the example; return the env and each step's (rewards, terminations, infos)."""
    env = llm_coop_envs.make("coop_humaneval-v2", num_turns=2, **kwargs)
    env.reset(seed=0, options={"task_id": TASK_ID})
    steps = []
    for replies in TURNS:
        if not env.agents:
            break
        _, rewards, terminations, _, infos = env.step(replies)
        steps.append((rewards, terminations, infos))
    return env, steps


def transcript() -> str:
    env, _ = play()
    return env.transcript()


def documented_transcript() -> str | None:
    match = BLOCK.search(DOCS_PAGE.read_text(encoding="utf-8"))
    return match.group(2) if match else None


def write_docs() -> None:
    page = DOCS_PAGE.read_text(encoding="utf-8")
    if not BLOCK.search(page):
        raise SystemExit(f"{DOCS_PAGE} has no transcript block (<!-- transcript:start --> ... end -->).")
    rendered = transcript()
    DOCS_PAGE.write_text(BLOCK.sub(lambda m: m.group(1) + rendered + m.group(3), page), encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write_docs()
    else:
        print(transcript())
