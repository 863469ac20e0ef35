"""llm_coop_envs.step_many: a batch of env steps scored in one sandbox batch equals one step each,
and every program keeps its own isolated run (a hostile or endless sibling changes nothing)."""

from __future__ import annotations

import copy

import pytest

import llm_coop_envs
from llm_coop_envs.coding.task import CodingTask
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.sandbox import SandboxConfig
from llm_coop_envs.sandbox.backend import bwrap_works
from tests.coding.problems import HELPER_SUM, MAIN_ALONE, MAIN_USES, MAIN_WRAPS, rows
from tests.sandbox.conftest import SUBPROCESS, skip_where_runs_share_the_callers_uid
from tests.sandbox.sandbox_watch import run_processes
from tests.toy_task import SecretWordTask

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="bubblewrap unusable")),
    SUBPROCESS,  # "subprocess" with its file view where namespaces work, else the opt-in "unconfined"
]

WRONG = "def add_then_double(a, b):\n    return a + b\n"
SYNTAX_ERROR = "def add_then_double(a, b)\n    return 1\n"
RAISES = "def add_then_double(a, b):\n    raise ValueError('no')\n"
NO_MAIN = "def something_else():\n    return 1\n"
ENDLESS = "def add_then_double(a, b):\n    while True:\n        pass\n"
# Tries everything that could reach a sibling run: kill every process it may, leave a daemon that
# keeps killing, fill the scratch folder and /dev/shm, and rebind what the judge might look at.
HOSTILE = (
    "import os, signal, builtins\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    while True:\n"
    "        try:\n"
    "            os.kill(-1, signal.SIGKILL)\n"
    "        except OSError:\n"
    "            pass\n"
    "for folder in ('.', '/tmp', '/dev/shm'):\n"
    "    try:\n"
    "        with open(os.path.join(folder, 'junk'), 'wb') as f:\n"
    "            f.write(b'x' * (1 << 20))\n"
    "    except OSError:\n"
    "        pass\n"
    "builtins.abs = lambda x: 0\n"
    "try:\n"
    "    os.kill(-1, signal.SIGKILL)\n"
    "except OSError:\n"
    "    pass\n"
    "def add_then_double(a, b):\n"
    "    return 6\n"
)
MAINS = [MAIN_USES, MAIN_ALONE, MAIN_WRAPS, WRONG, SYNTAX_ERROR, RAISES, NO_MAIN, ""]


def _env(backend: str = "auto", **kwargs) -> CoopEnv:
    config = SandboxConfig(backend=backend, timeout_s=2.0, test_timeout_s=0.5, memory_mb=256,
                           max_processes=16, max_file_mb=4)
    return CoopEnv(CodingTask(rows(2), sandbox=config), **kwargs)


def _branches(env: CoopEnv, n: int, task_id: str = "Toy/0") -> list[CoopEnv]:
    env.reset(options={"task_id": task_id})
    return [copy.deepcopy(env) for _ in range(n)]


def _comparable(step: tuple) -> tuple:
    """A step's outputs without what legitimately differs between two runs (timings)."""
    observations, rewards, terminations, truncations, infos = step
    infos = copy.deepcopy(infos)
    for info in infos.values():
        sandbox = (info.get("details") or {}).get("sandbox")
        if sandbox:
            sandbox.pop("duration_s", None)  # one dict may be shared by both agents
    return observations, rewards, terminations, truncations, infos


@pytest.mark.parametrize("num_turns", [1, 2])
def test_batched_steps_equal_one_step_each(num_turns) -> None:
    env = _env(num_turns=num_turns)
    actions = [{"helper": HELPER_SUM, "main": main} for main in MAINS]
    batched = llm_coop_envs.step_many(_branches(env, len(MAINS)), actions)
    single = [branch.step(a) for branch, a in zip(_branches(env, len(MAINS)), actions)]
    assert [_comparable(s) for s in batched] == [_comparable(s) for s in single]
    solved = [s[4]["main"].get("solved") for s in batched]
    assert solved == [True, True] + [False] * 6


def test_sequential_protocol_batches_only_the_turns_that_end() -> None:
    env = _env(protocol="sequential")
    first = llm_coop_envs.step_many(_branches(env, 2), [{"helper": HELPER_SUM}] * 2)
    assert all(rewards["main"] == 0 for _, rewards, *_ in first)
    envs = _branches(env, 2)
    for branch in envs:
        branch.step({"helper": HELPER_SUM})
    singles = copy.deepcopy(envs)
    actions = [{"main": MAIN_USES}, {"main": WRONG}]
    batched = llm_coop_envs.step_many(envs, actions)
    single = [branch.step(a) for branch, a in zip(singles, actions)]
    assert [_comparable(s) for s in batched] == [_comparable(s) for s in single]


def test_envs_of_other_tasks_and_problems_mix_in_one_call() -> None:
    coding = _env()
    toy = CoopEnv(SecretWordTask())
    toy.reset(seed=0)
    envs = [*_branches(coding, 1, "Toy/0"), copy.deepcopy(toy), *_branches(coding, 1, "Toy/1")]
    actions = [{"helper": HELPER_SUM, "main": MAIN_USES}, {a: "apple" for a in toy.agents},
               {"helper": HELPER_SUM, "main": WRONG}]
    batched = llm_coop_envs.step_many(envs, actions)
    expected = copy.deepcopy(toy).step(actions[1])
    assert batched[1][1] == expected[1]
    assert batched[0][4]["main"]["solved"] and not batched[2][4]["main"]["solved"]


def test_invalid_actions_raise_before_any_env_changes() -> None:
    envs = _branches(_env(), 2)
    with pytest.raises(ValueError, match="No reply"):
        llm_coop_envs.step_many(envs, [{"helper": HELPER_SUM, "main": MAIN_USES}, {"helper": ""}])
    assert all(not branch._episode.pending and branch._episode.cycles == 0 for branch in envs)
    with pytest.raises(ValueError, match="distinct"):
        llm_coop_envs.step_many([envs[0], envs[0]], [{"helper": "", "main": ""}] * 2)
    with pytest.raises(ValueError, match="actions"):
        llm_coop_envs.step_many(envs, [{"helper": "", "main": ""}])
    assert llm_coop_envs.step_many([], []) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hostile_or_endless_sibling_changes_no_other_reward(backend) -> None:
    skip_where_runs_share_the_callers_uid(backend, "the hostile sibling kills every process it may")
    env = _env(backend)
    mains = [MAIN_USES, HOSTILE, MAIN_ALONE, ENDLESS, MAIN_USES, HOSTILE, WRONG, MAIN_ALONE]
    actions = [{"helper": HELPER_SUM, "main": main} for main in mains]
    alone = {main: branch.step({"helper": HELPER_SUM, "main": main})[1]["main"]
             for main, branch in zip([MAIN_USES, MAIN_ALONE, WRONG], _branches(env, 3))}
    batched = llm_coop_envs.step_many(_branches(env, len(mains)), actions)
    for main, (_, rewards, _, _, infos) in zip(mains, batched):
        if main in alone:
            assert rewards["main"] == alone[main], main
        else:
            assert not infos["main"]["solved"]
    endless = batched[3][4]["main"]["details"]["tests"]
    assert endless[0]["status"] == "timeout" and not any(t["status"] == "passed" for t in endless)
    assert run_processes() == []
