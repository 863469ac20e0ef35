"""docs/benchmarking.md says where ``llm-coop bench``'s default budget differs from the committed
leaderboard's; this keeps that list true."""

import dataclasses
import json
from pathlib import Path

from benchmarks.learning.plan import Budget

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = ROOT / "benchmarks" / "results" / "learning" / "coop_basics-v0" / "results.json"
NAMED_IN_THE_DOCS = {"eval_every", "eval_problems", "learning_rate", "temperature", "top_p", "stop_after_code"}


def test_the_docs_name_every_setting_where_the_defaults_differ_from_the_leaderboard():
    committed = Budget.from_dict(json.loads(LEADERBOARD.read_text(encoding="utf-8"))["budget"])
    defaults = Budget()
    differ = {f.name for f in dataclasses.fields(Budget) if getattr(committed, f.name) != getattr(defaults, f.name)}
    assert differ == NAMED_IN_THE_DOCS
    page = (ROOT / "docs" / "benchmarking.md").read_text(encoding="utf-8")
    assert "all 43 held-out problems at steps 0 and 10" in page and (committed.eval_problems, committed.eval_every) == (43, 10)
    assert "learning rate 5e-4" in page and committed.learning_rate == 5e-4
    assert "temperature 0.8 / top-p 1.0" in page and (committed.temperature, committed.top_p) == (0.8, 1.0)
