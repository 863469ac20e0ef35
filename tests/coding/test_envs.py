"""Every coding id: conformance, splits, data files, protocols."""

import json

import pytest

import llm_coop_envs
from llm_coop_envs.testing import check_env

CODING_IDS = ("coop_humaneval-v0", "humaneval-v0", "mbpp-v1")


@pytest.mark.parametrize("env_id", CODING_IDS)
def test_check_env(env_id):
    check_env(llm_coop_envs.make(env_id))


@pytest.mark.parametrize(
    ("env_id", "sizes"),
    [
        ("coop_humaneval-v0", {"train": 50, "test": 16, "all": 82}),
        ("humaneval-v0", {"train": 100, "test": 32, "all": 164}),
        ("mbpp-v1", {"train": 50, "test": 15, "all": 257}),
    ],
)
def test_split_sizes(env_id, sizes):
    for split, size in sizes.items():
        assert len(llm_coop_envs.make(env_id, split=split).task) == size
    assert len(llm_coop_envs.make(env_id).task) == sizes["train"], "the default split is train"


def test_sequential_protocol_main_sees_the_helper_code():
    env = llm_coop_envs.make("coop_humaneval-v0", protocol="sequential")
    observations, infos = env.reset(options={"task_id": "CoopHumanEval/0"})
    assert infos["helper"]["active"] and not infos["main"]["active"]
    assert "will read your code" in observations["helper"]
    helper = "def aux(n):\n    return n > 1 and all(n % k for k in range(2, n))\n"
    observations, rewards, *_ , infos = env.step({"helper": helper})
    assert rewards == {"helper": 0.0, "main": 0.0}
    assert infos["main"]["active"]
    assert "its reply is shown below" in observations["main"]
    assert observations["main"].endswith("The helper agent wrote:\n" + helper)
    main = "def x_or_y(n, x, y):\n    return x if aux(n) else y\n"
    _, rewards, terminations, _, infos = env.step({"main": main})
    assert rewards["main"] == pytest.approx(4.0), "a conditional around aux's result is more than a wrapper"
    assert infos["main"]["solved"] and all(terminations.values())


def test_parallel_prompts_name_the_roles_and_the_helper_function():
    env = llm_coop_envs.make("humaneval-v0", split="test")
    observations, _ = env.reset(options={"task_id": "HumanEval/0"})
    assert "named `aux`" in observations["helper"] and "Do not write `has_close_elements`" in observations["helper"]
    assert "you will not see its code" in observations["main"]
    assert "def has_close_elements(numbers: List[float], threshold: float) -> bool:" in observations["main"]


def test_multi_turn_feedback_reaches_the_next_observation():
    env = llm_coop_envs.make("mbpp-v1", split="test", num_turns=2)
    observations, infos = env.reset(options={"index": 0})
    entry = env.task.problems[0].entry_point
    wrong = f"def {entry}(*args):\n    return None\n"
    observations, _, terminations, _, infos = env.step({"helper": "def aux(x):\n    return x\n", "main": wrong})
    assert not any(terminations.values())
    assert "Hidden tests: 0/" in infos["main"]["feedback"]
    assert "Hidden tests: 0/" in observations["main"] and "Revise your reply." in observations["main"]
    assert infos["main"]["details"]["sandbox"]["status"] == "ok"


def _write_rows(path, rows):
    path.write_text(json.dumps(rows))
    return path


def test_data_path_with_a_users_own_json_file(tmp_path):
    from tests.coding.problems import HELPER_SUM, MAIN_USES, rows

    path = _write_rows(tmp_path / "mine.json", rows(5))
    for env_id in CODING_IDS:
        assert len(llm_coop_envs.make(env_id, data_path=path, split="all").task) == 5
        assert len(llm_coop_envs.make(env_id, data_path=path, split="train").task) == 4
        assert len(llm_coop_envs.make(env_id, data_path=path, split="test").task) == 1
    env = llm_coop_envs.make("coop_humaneval-v0", data_path=path)
    env.reset(options={"task_id": "Toy/2"})
    _, rewards, *_ = env.step({"helper": HELPER_SUM, "main": MAIN_USES})
    assert rewards["main"] == pytest.approx(4.0)


def test_humaneval_data_path_accepts_json_lines(tmp_path):
    from tests.coding.problems import rows

    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows(3)))
    assert len(llm_coop_envs.make("humaneval-v0", data_path=path, split="all").task) == 3


def test_rows_missing_fields_get_a_clear_error(tmp_path):
    path = _write_rows(tmp_path / "bad.json", [{"task_id": "x", "prompt": "def f():\n    pass\n"}])
    with pytest.raises(ValueError, match="'test'"):
        llm_coop_envs.make("coop_humaneval-v0", data_path=path, split="all")


def test_bad_split_is_rejected():
    with pytest.raises(ValueError, match="split"):
        llm_coop_envs.make("coop_humaneval-v0", split="validation")


def test_slow_code_times_out_with_deterministic_feedback():
    from llm_coop_envs.sandbox import SandboxConfig

    env = llm_coop_envs.make(
        "coop_humaneval-v0", sandbox=SandboxConfig(timeout_s=3.0, test_timeout_s=0.2), split="all"
    )
    env.reset(options={"task_id": "CoopHumanEval/0"})
    spin = "def x_or_y(n, x, y):\n    while True:\n        pass\n"
    _, rewards, _, _, infos = env.step({"helper": "", "main": spin})
    assert rewards["main"] == pytest.approx(0.6 + 0.5)
    assert "(stopped at its time limit)" in infos["main"]["feedback"]


@pytest.mark.parametrize(
    "change,message",
    [
        ({"test": "def check(candidate):\n    assert candidate(1) ==\n"}, r"'Toy/1' \(row 1\): its 'test' is not valid Python"),
        ({"entry_point": "missing_name"}, r"'Toy/1' \(row 1\): its prompt does not define the entry point 'missing_name'"),
    ],
)
def test_rows_that_no_agent_could_pass_are_rejected(tmp_path, change, message):
    from tests.coding.problems import rows

    mine = rows(3)
    mine[1] = {**mine[1], **change}
    path = _write_rows(tmp_path / "bad.json", mine)
    with pytest.raises(ValueError, match=message):
        llm_coop_envs.make("coop_humaneval-v0", data_path=path, split="all")
