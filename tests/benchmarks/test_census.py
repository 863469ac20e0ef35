"""``python -m benchmarks.house.census`` prints its table, and its rules find what they say they find."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from benchmarks.house.census import COLUMNS, PACKAGES, findings

ROOT = Path(__file__).resolve().parents[2]


def test_the_census_prints_a_row_per_package_and_where_it_counted():
    result = subprocess.run([sys.executable, "-m", "benchmarks.house.census"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=True)
    lines = result.stdout.splitlines()
    assert f"| package | lines | {' | '.join(COLUMNS)} |" in lines
    rows = {cells[0]: cells[1:] for line in lines if line.startswith("| ") and not line.startswith("| package")
            for cells in [[cell.strip() for cell in line.strip("|").split("|")]]}
    for name in (*PACKAGES, "llm_coop_envs.lm", "trainers.generation", "all three"):
        assert name in rows, f"no row for {name}: {result.stdout}"
    assert all(len(cells) == 1 + len(COLUMNS) and all(c.isdigit() for c in cells) for cells in rows.values())
    assert int(rows["all three"][0]) == sum(int(rows[name][0]) for name in PACKAGES) > 0
    for column in range(1, 1 + len(COLUMNS)):
        assert int(rows["all three"][column]) == sum(int(rows[name][column]) for name in PACKAGES)
    where = [line for line in lines if line.startswith("- ")]
    for line in where:  # each counted place names a real line of a real file
        path, number = re.search(r": (\S+\.py):(\d+) ", line).groups()
        assert 0 < int(number) <= len((ROOT / path).read_text(encoding="utf-8").splitlines()), line


def test_the_rules_on_a_small_example():
    source = '''
import functools

def generate(model, cache, settings):
    for step in range(settings.max_new_tokens):
        out = model(input_ids=ids, past_key_values=cache)
        cache.reorder_cache(keep)  # in the loop: finished rows leave, no sharing

def prefill(model, index):
    cache = cache_of(model(ids, use_cache=True))
    cache.reorder_cache(index)

def through_layers(blocks, x, cache):
    for block in blocks:
        x = block(x, cache)

def train(steps, cache):
    for step in range(steps):
        accumulate(cache)

def install(layer, model):
    layer.forward = functools.partial(_rows, layer)
    model.forward = functools.partial(type(model).forward, model, adapter_names=[])

def load(path):
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)

def convert(path, out):
    AutoModelForCausalLM.from_pretrained(path).save_pretrained(out)
'''
    found = findings(source, "example.py")
    assert Counter((f.kind, f.function) for f in found) == Counter({
        ("decode path", "generate"): 1, ("decode path", "install"): 1, ("prefix sharing", "prefill"): 1,
        ("model loading", "load"): 1, ("conversion", "convert"): 1,
    }), [str(f) for f in found]
