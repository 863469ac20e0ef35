"""The two pages that teach a plug-in algorithm give one instruction: name the class by its import
path (``module:Class``), nothing to register. docs/algorithms.md's example class loads that way."""

import re
import sys
from pathlib import Path

import numpy as np

from trainers.algorithms import get_algorithm
from trainers.rollout import Group

ROOT = Path(__file__).resolve().parents[2]


def example_class_source() -> str:
    page = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(import numpy as np.*?class BestOfGroup.*?)```", page, re.S).group(1)
    return block.split("\ntrainer = Trainer(")[0]


def test_the_algorithms_page_example_loads_by_its_import_path(tmp_path, monkeypatch):
    source = example_class_source()
    assert "register_algorithm" not in source
    (tmp_path / "best_of_group_page.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        algorithm = get_algorithm("best_of_group_page:BestOfGroup", length_cost=0.002)  # what train and bench look up
    finally:
        sys.modules.pop("best_of_group_page", None)
    returns = np.array([0.0, 2.0, 1.0, 2.0])
    group = Group(returns=returns, rewards=returns, agents=("helper", "main"), depth=0)
    assert algorithm.length_cost == 0.002 and algorithm.advantages(group).tolist() == [0, 1, 0, 1]


def test_both_pages_name_the_class_by_its_import_path_for_the_commands():
    algorithms = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    bench_page = (ROOT / "docs" / "benchmark_your_algorithm.md").read_text(encoding="utf-8")
    assert "--algo my_package.best:BestOfGroup" in algorithms and "--algos my_package.best:BestOfGroup" in algorithms
    nothing_to_register = re.compile(r"[Nn]othing\s+to\s+register")
    assert nothing_to_register.search(bench_page) and nothing_to_register.search(algorithms)
    assert re.search(r"do\s+not\s+see\s+it", algorithms)  # a name registered in one process is no command-line name
