"""docs/benchmark_your_algorithm.md works as written: its algorithm file loads as ``module:Class`` and
learns, its ``llm-coop bench`` command plans runs at the protocol's env and budget (the defaults of
``benchmarks/learning/protocol.json``), and the report prints the rows the page shows."""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys
from pathlib import Path

import pytest

from benchmarks.learning.cli import _parser, bench_command
from benchmarks.learning.plan import Budget, check_algorithms, plan, train_command
from benchmarks.learning.protocol import load_protocol
from tests.benchmarks.learning_runs import write_meta, write_run
from tests.test_docs_examples import python_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "benchmark_your_algorithm.md"
NAME = "win_rate:WinRate"


@pytest.fixture()
def page_module(tmp_path, monkeypatch):
    """The page's algorithm file, saved and importable as the page says (``win_rate``)."""
    (block,) = [b for b in python_blocks(PAGE.name, PAGE.read_text(encoding="utf-8")) if b.saved_as]
    (tmp_path / block.saved_as).write_text(block.code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "win_rate", raising=False)
    return block


def bench_command_text() -> str:
    (command,) = [c for c in re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S) if "llm-coop bench" in c]
    return command


def bench_argv() -> list[str]:
    """The page's ``llm-coop bench`` command, without the environment assignment and the program name."""
    words = shlex.split(bench_command_text().replace("\\\n", " "))
    return words[words.index("bench") + 1 :]


def test_the_page_algorithm_learns_the_scripted_env(page_module):
    from tests.trainers.bandit import train_bandit
    from trainers.algorithms import get_algorithm

    for per_agent in (False, True):
        policy = train_bandit(get_algorithm(NAME), per_agent=per_agent)
        assert min(policy.prob_of_best("helper"), policy.prob_of_best("main")) > 0.8  # from 1/3


def test_the_page_algorithm_trains_a_step_of_the_tiny_model_by_its_module_class_name(page_module, tmp_path):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config
    from trainers.trainer import Trainer

    tokenizer = build_tokenizer()
    trainer = Trainer(tiny_config(tmp_path, algo=NAME, steps=1, problems_per_step=2),
                      env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    assert type(trainer.algorithm).__name__ == "WinRate"
    (row,) = trainer.train()
    assert row["train/optimizer_steps"] == 1
    assert all(row[f"agent/{agent}/loss"] == row[f"agent/{agent}/loss"] for agent in ("helper", "main"))  # finite


def test_the_page_command_plans_runs_at_the_protocols_budget(page_module, tmp_path):
    args, protocol = _parser().parse_args(bench_argv()), load_protocol()
    algorithms = args.algos.split(",")
    assert algorithms[0] == NAME and args.env == protocol.env and tuple(args.seeds) == protocol.seeds
    assert check_algorithms(algorithms) == {NAME: "pair", "magrpo": "pair", "grpo": "single"}
    budget = Budget(**{field.name: getattr(args, field.name) for field in dataclasses.fields(Budget)})
    assert budget == protocol.budget  # every setting, the code-fence stop included
    specs = plan(algorithms, args.seeds)
    assert specs[0].name == "win_rate_WinRate-seed0" and len(specs) == len(algorithms) * len(args.seeds)
    command = train_command(specs[0], args.env, budget, tmp_path)
    assert command[command.index("--algo") + 1] == NAME


def test_the_report_prints_the_rows_the_page_shows(page_module, tmp_path):
    args = _parser().parse_args(bench_argv())
    algorithms, budget = args.algos.split(","), Budget(steps=args.steps, eval_every=args.eval_every, eval_problems=6)
    runs_dir, out = tmp_path / "runs", tmp_path / "out"
    write_meta(runs_dir, budget, algorithms=algorithms, seeds=args.seeds)
    for spec in plan(algorithms, args.seeds):  # finished runs written by hand: nothing trains
        write_run(runs_dir, spec.name, {0: [False] * 6, args.steps: [True, False] * 3}, pair=spec.algo != "grpo")
    assert bench_command(["--report-only", "--runs-dir", str(runs_dir), "--out", str(out), "--resamples", "50", "-q"]) == 0
    report = (out / "results.md").read_text(encoding="utf-8")

    def first_column(text: str, header: str) -> list[str]:
        table = text.split(header, 1)[1].split("\n\n", 1)[0]
        return [line.split(" | ")[0].lstrip("| ") for line in table.splitlines()[2:]]

    for header in ("| agents | seeds |", "| comparison |"):
        assert first_column(PAGE.read_text(encoding="utf-8"), header) == first_column(report, header)


def test_the_researchers_code_is_under_40_lines_as_the_page_says(page_module):
    text = PAGE.read_text(encoding="utf-8")
    lines = len(page_module.code.splitlines()) + len(bench_command_text().splitlines())
    assert lines < 40 and f"{lines} lines in all" in text
