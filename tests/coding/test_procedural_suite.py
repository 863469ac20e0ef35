"""coop_procedural-v0: every generated problem is sound, solvable through the env by its references,
not passed by a guess, deterministic per seed, and the splits never share a problem."""

from __future__ import annotations

import ast
import collections
import copy
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import llm_coop_envs
from llm_coop_envs.coding.procedural import HELDOUT_FAMILIES, LEVELS, TRAIN_FAMILIES, TrainRows, fixed_rows
from llm_coop_envs.coding.procedural.build import MAX_SOURCE_CHARS, content_hash

ENV_ID = "coop_procedural-v0"
TASK_ID = re.compile(r"coop_procedural/([a-z_]+)/L([1-3])/[0-9a-f]{8}")
TRAIN_SAMPLE = 3600
"""Training rows checked for disjointness: 100 per training family and level."""


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


def _per_cell(rows: Sequence[dict[str, Any]], count: int) -> list[int]:
    """Indices of the first ``count`` rows of every (family, level)."""
    taken: collections.Counter = collections.Counter()
    chosen = []
    for index, row in enumerate(rows):
        cell = (row["family"], row["level"])
        if taken[cell] < count:
            taken[cell] += 1
            chosen.append(index)
    return chosen


def _step_all(env, items: Sequence[tuple[int, str, str]]) -> list[dict[str, Any]]:
    """``infos["main"]`` of one step per (problem index, helper reply, main reply), scored in one batch."""
    copies = []
    for index, _, _ in items:
        env.reset(seed=0, options={"index": index})
        copies.append(copy.deepcopy(env))
    actions = [{"helper": _fenced(helper), "main": _fenced(main)} for _, helper, main in items]
    return [infos["main"] for _, _, _, _, infos in llm_coop_envs.step_many(copies, actions)]


def _train_sample(count: int) -> list[dict[str, Any]]:
    rows = TrainRows()
    return [rows[i] for i in range(count)]


# ----------------------------------------------------------------------------- the suite's shape


def test_families_levels_and_sizes():
    assert len(TRAIN_FAMILIES) >= 12 and len(HELDOUT_FAMILIES) >= 4
    assert not set(TRAIN_FAMILIES) & set(HELDOUT_FAMILIES)
    test, heldout = fixed_rows("test"), fixed_rows("heldout_families")
    assert len(test) >= 320 and len(heldout) >= 80
    assert {(r["family"], r["level"]) for r in test} == {(f, lv) for f in TRAIN_FAMILIES for lv in LEVELS}
    assert {(r["family"], r["level"]) for r in heldout} == {(f, lv) for f in HELDOUT_FAMILIES for lv in LEVELS}
    assert len(llm_coop_envs.make(ENV_ID).task) == 10**6, "train draws look endless"
    facts = {r["family"] for r in (*test, *heldout) if r["helper_fact"]}
    assert len(facts & set(TRAIN_FAMILIES)) >= 3 and facts & set(HELDOUT_FAMILIES)


def _all_rows() -> Iterator[dict[str, Any]]:
    yield from fixed_rows("test")
    yield from fixed_rows("heldout_families")
    yield from _train_sample(72)


def test_every_row_has_the_suite_fields():
    for row in _all_rows():
        match = TASK_ID.fullmatch(row["task_id"])
        assert match and match.group(1) == row["family"] and int(match.group(2)) == row["level"], row["task_id"]
        assert row["task_id"].endswith(content_hash(row)[:8])
        assert re.fullmatch(r"def aux\(.*\):", row["helper"]["signature"]) and row["helper"]["doc"].endswith(".")
        assert row["prompt"].startswith(f"def {row['entry_point']}(") and ">>> " in row["prompt"]
        for source in (row["reference_helper"], row["reference_main"]):
            assert len(source) <= MAX_SOURCE_CHARS
            ast.parse(source)
        hidden, public = _calls(row["test"]), _calls(row["public_test"])
        assert len(hidden) >= 5 and 1 <= len(public) <= 2
        assert not set(hidden) & set(public), f"{row['task_id']}: a hidden test repeats a public example"
        assert len(set(hidden)) == len(hidden)


def _calls(check_source: str) -> list[str]:
    """Each assert's call of candidate, as the dump of its arguments."""
    calls = []
    for node in ast.walk(ast.parse(check_source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate":
            calls.append(ast.dump(ast.Tuple(elts=node.args, ctx=ast.Load())))
    return calls


def test_helper_only_facts_stay_out_of_mains_prompt():
    env = llm_coop_envs.make(ENV_ID, split="test")
    for index, row in enumerate(env.task.problems[i].row for i in range(len(env.task))):
        if row["helper_fact"]:
            assert row["helper_fact"] not in env.task.prompt(index, "main")
            assert row["helper_fact"] not in row["helper"]["doc"]


# ----------------------------------------------------------------------------- through the env


@pytest.mark.parametrize("split", ["train", "test", "heldout_families"])
def test_reference_pairs_earn_the_top_reward(split):
    env = llm_coop_envs.make(ENV_ID, split=split)
    rows = _train_sample(72) if split == "train" else [p.row for p in env.task.problems]
    items = [(i, rows[i]["reference_helper"], rows[i]["reference_main"]) for i in _per_cell(rows, 2)]
    for (index, _, _), info in zip(items, _step_all(env, items)):
        assert info["task_id"] == rows[index]["task_id"]
        assert info["reward_components"]["tests"] == 1.0, info
        assert sum(info["reward_components"].values()) == pytest.approx(4.0), info


def _guesses(row: dict[str, Any]) -> list[str]:
    """Mains that guess instead of solving: constants, the identity, and tables of the public examples
    that fall back on a constant (the commonest hidden answer, the worst case for the suite)."""
    entry = row["entry_point"]
    commonest = collections.Counter(repr(t["expected"]) for t in row["tests"]).most_common(1)[0][0]
    table = {repr(t["args"]): t["expected"] for t in row["public_tests"]}
    constants = ["0", "1", "None", "[]", "''", "{}", "True", "False", "0.0", commonest]
    mains = [f"def {entry}(*args):\n    return {value}\n" for value in constants]
    mains.append(f"def {entry}(*args):\n    return args[0]\n")
    for fallback in (commonest, "None"):
        mains.append(f"def {entry}(*args):\n    table = {table!r}\n"
                     f"    return table.get(repr(list(args)), {fallback})\n")
    return mains


def test_guessing_mains_never_get_full_test_credit():
    for split in ("test", "heldout_families"):
        env = llm_coop_envs.make(ENV_ID, split=split)
        rows = [p.row for p in env.task.problems]
        items = [(i, rows[i]["reference_helper"], main) for i in _per_cell(rows, 1) for main in _guesses(rows[i])]
        for (index, _, main), info in zip(items, _step_all(env, items)):
            assert info["reward_components"]["tests"] < 1.0, (rows[index]["task_id"], main)


def test_echoing_the_public_examples_passes_them():
    """The echo table is right where it should be: it passes the public examples (so the failures
    above come from the hidden tests, not from a broken table)."""
    row = fixed_rows("test")[0]
    namespace: dict[str, Any] = {}
    exec(_guesses(row)[-2], namespace)
    for test in row["public_tests"]:
        assert namespace[row["entry_point"]](*test["args"]) == test["expected"]


# ----------------------------------------------------------------------------- splits and seeds


def test_train_test_and_heldout_never_share_a_prompt_or_a_test():
    train = _train_sample(TRAIN_SAMPLE)
    test, heldout = fixed_rows("test"), fixed_rows("heldout_families")
    for field in ("prompt", "test"):
        seen = {name: {r[field] for r in rows} for name, rows in (("train", train), ("test", test),
                                                                     ("heldout", heldout))}
        assert not seen["train"] & seen["test"], field
        assert not seen["heldout"] & (seen["train"] | seen["test"]), field
    assert len({r["prompt"] for r in test}) == len(test), "the test set holds no duplicates"
    assert len({r["prompt"] for r in heldout}) == len(heldout)


def test_draws_are_balanced_over_families_and_levels():
    cells = collections.Counter((r["family"], r["level"]) for r in _train_sample(72))
    assert set(cells.values()) == {2} and len(cells) == len(TRAIN_FAMILIES) * len(LEVELS)


@pytest.mark.parametrize("split", ["test", "heldout_families"])
def test_fixed_splits_take_families_and_levels_in_turns(split):
    """The first N problems of a fixed split (what the trainer and the bench evaluate) are a balanced
    sample: problem i is level i % L of family (i // L) % F, and narrowed to one level the families
    take turns."""
    families = list(TRAIN_FAMILIES if split == "test" else HELDOUT_FAMILIES)
    rows = fixed_rows(split)
    F, L = len(families), len(LEVELS)
    assert [(r["family"], r["level"]) for r in rows] == [
        (families[(i // L) % F], LEVELS[i % L]) for i in range(len(rows))]
    narrowed = llm_coop_envs.make(ENV_ID, split=split, level=1)
    first = [narrowed.task.problems[i].row for i in range(2 * F)]
    assert [r["family"] for r in first] == families * 2 and {r["level"] for r in first} == {1}
    whole = llm_coop_envs.make(ENV_ID, split=split)
    assert [whole.task.problems[i].row["task_id"] for i in range(F * L)] == [r["task_id"] for r in rows[:F * L]]


_DIGEST = (
    "import hashlib, json\n"
    "from llm_coop_envs.coding.procedural import TrainRows, fixed_rows\n"
    "rows = [TrainRows()[i] for i in (0, 1, 17, 999_999)] + list(fixed_rows('test')[::40])\n"
    "rows += list(fixed_rows('heldout_families')[::20])\n"
    "print(hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest())\n"
)


def test_generation_is_deterministic_across_processes():
    digests = set()
    for hash_seed in ("0", "12345"):
        done = subprocess.run([sys.executable, "-c", _DIGEST], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        digests.add(done.stdout.strip())
    assert len(digests) == 1
    assert TrainRows()[17] == TrainRows()[17]
    assert json.dumps(TrainRows()[5], sort_keys=True) == json.dumps(copy.deepcopy(TrainRows())[5], sort_keys=True)


def test_offline_reset_by_seed_is_reproducible(monkeypatch, tmp_path):
    monkeypatch.setenv("LLM_COOP_DATA_DIR", str(tmp_path))  # nothing to read: the suite is generated
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for split in ("train", "test", "heldout_families"):
        first, second = llm_coop_envs.make(ENV_ID, split=split), llm_coop_envs.make(ENV_ID, split=split)
        for seed in range(3):
            observations, infos = first.reset(seed=seed)
            again, infos_again = second.reset(seed=seed)
            assert observations == again and infos["main"]["task_id"] == infos_again["main"]["task_id"]
            assert infos["main"]["task_id"].startswith("coop_procedural/")
            assert "def aux(" in observations["helper"] and "aux" in observations["main"]


def test_level_narrows_every_split_visibly():
    narrowed = llm_coop_envs.make(ENV_ID, split="test", level=1)
    assert len(narrowed.task) == sum(r["level"] == 1 for r in fixed_rows("test"))
    assert narrowed.metadata["suite"]["levels"] == [1] and narrowed.metadata["suite"]["narrowed"]
    whole = llm_coop_envs.make(ENV_ID, split="test")
    assert whole.metadata["suite"] == {**whole.metadata["suite"], "levels": [1, 2, 3], "narrowed": False}
    train = llm_coop_envs.make(ENV_ID, level=[2, 3])
    assert {train.task.problems[i].row["level"] for i in range(24)} == {2, 3}
    for bad in ({"level": 4}, {"level": []}, {"level": "1"}, {"split": "all"}, {"data_path": "x.json"}):
        with pytest.raises((ValueError, TypeError)):
            llm_coop_envs.make(ENV_ID, **bad)


def test_conformance():
    from llm_coop_envs.testing import check_env

    check_env(llm_coop_envs.make(ENV_ID, split="test"))
    check_env(llm_coop_envs.make(ENV_ID))


def test_a_drawn_training_problem_reopens_by_task_id():
    env = llm_coop_envs.make(ENV_ID)
    _, infos = env.reset(seed=7)
    _, again = env.reset(options={"task_id": infos["main"]["task_id"]})
    assert again["main"]["task_id"] == infos["main"]["task_id"]
    with pytest.raises(ValueError, match="by index"):
        env.reset(options={"task_id": "coop_procedural/digit_sums/L1/00000000"})


def test_problems_per_cell_appends_to_the_fixed_splits():
    """A larger fixed split for a benchmark that needs more held-out problems: its first problems are
    the default split's, in the same turns, and it never holds a training prompt or test."""
    default = llm_coop_envs.make(ENV_ID, split="test", level=1)
    larger = llm_coop_envs.make(ENV_ID, split="test", level=1, problems_per_cell=30)
    assert len(larger.task) == 3 * len(default.task) == 12 * 30
    rows = [larger.task.problems[i].row for i in range(len(larger.task))]
    assert rows[: len(default.task)] == [default.task.problems[i].row for i in range(len(default.task))]
    assert len({row["prompt"] for row in rows}) == len(rows)
    train = _train_sample(240)
    assert not {row["prompt"] for row in rows} & {row["prompt"] for row in train}
    assert not {row["test"] for row in rows} & {row["test"] for row in train}
    families = llm_coop_envs.make(ENV_ID, split="heldout_families", level=1, problems_per_cell=30)
    assert {families.task.problems[i].row["family"] for i in range(4)} == set(HELDOUT_FAMILIES)
    for bad in ({"problems_per_cell": 0}, {"problems_per_cell": 1.5}, {"problems_per_cell": 10_000},
                {"split": "train", "problems_per_cell": 3}):
        with pytest.raises(ValueError, match="problems_per_cell"):
            llm_coop_envs.make(ENV_ID, **{"split": "test", **bad})

