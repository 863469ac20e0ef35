"""``benchmarks.learning.replay``: a bench's records stepped again give their rewards back, and a record
whose reward is not what its replies earn is reported, with a failing exit code."""

from __future__ import annotations

import copy
import json

from benchmarks.learning import replay
from benchmarks.learning.evaluation import EVAL_SEED, record
from llm_coop_envs.core.runner import run_episodes

REPLIES = {"helper": "```python\ndef aux(x):\n    return x\n```", "main": "I would rather not write code."}


def _bench(tmp_path):
    """A bench folder whose records are the evaluation's own records of three held-out episodes."""
    records = tmp_path / "records"
    records.mkdir()
    meta = {"env": "coop_basics-v0", "overrides": []}
    (records / "bench.json").write_text(json.dumps(meta), encoding="utf-8")
    env, _ = replay.held_out_env(meta)
    episodes = run_episodes([copy.deepcopy(env) for _ in range(3)],
                            lambda requests: [REPLIES.get(r.agent, "") for r in requests],
                            seeds=[EVAL_SEED] * 3, options=[{"index": i} for i in range(3)])
    return records, [record(e) for e in episodes]


def _write(records, rows):
    (records / "untrained-pair.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_records_replay_to_their_own_rewards(tmp_path):
    records, rows = _bench(tmp_path)
    _write(records, rows)
    out = tmp_path / "replay.md"
    assert replay.main([str(tmp_path), "--out", str(out)]) == 0
    assert "**3 of 3** records replay to the same reward and components" in out.read_text(encoding="utf-8")


def test_a_record_that_its_replies_do_not_earn_is_listed(tmp_path):
    records, rows = _bench(tmp_path)
    rows[1]["reward"] += 1e-9  # the last bit of a reward is enough
    _write(records, rows)
    out = tmp_path / "replay.md"
    assert replay.main([str(tmp_path), "--out", str(out)]) == 1
    report = out.read_text(encoding="utf-8")
    assert "**2 of 3**" in report and rows[1]["task_id"] in report
