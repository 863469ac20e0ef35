"""``check_env``: the conformance checks every registered environment passes.

Beyond PettingZoo's own API tests it checks what trainers rely on: whole episodes are
reproducible from a seed, any string is a legal reply, bad calls raise clear errors, and a deep
copy branches an episode without touching the original.
"""

from __future__ import annotations

import copy
import importlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from llm_coop_envs.core.spaces import UnicodeText
from llm_coop_envs.versions import in_tested_range

JUNK_REPLIES = (
    "",
    "   \n\t",
    "\x00\x01\x02\xff binary \x7f",
    "\ud800 lone surrogate \udfff",
    "```python\ndef broken(:\n```",
    "x" * 200_000,
    "🙂" * 1000,
)


def check_env(env: Any, *, seed: int = 0, quick: bool = False) -> None:
    """Raise ``AssertionError`` (or the env's own error) if ``env`` breaks the contract.

    ``env`` is not modified: every check runs on a deep copy. ``quick`` skips PettingZoo's random
    API tests (useful for envs whose every step is expensive).
    """
    fresh = lambda: copy.deepcopy(env)  # noqa: E731
    _check_spaces(fresh())
    if not quick:
        _pettingzoo_api_tests(fresh)
    _check_determinism(fresh, seed)
    _check_junk_replies(fresh(), seed)
    _check_bad_calls(fresh(), seed)
    _check_branching(fresh(), seed)
    _check_task_selection(fresh())


def _pettingzoo_api_tests(fresh: Callable[[], Any]) -> None:
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import parallel_to_aec

    api_test_module = importlib.import_module("pettingzoo.test.api_test")  # the module, not the function
    numeric_dtype_check = getattr(api_test_module, "_test_observation_space_compatibility", None)
    # The AEC test can check text observations only with that private check replaced: with the check
    # gone, or a PettingZoo outside the declared range, the AEC test is left out (and a warning says so).
    replaceable = numeric_dtype_check is not None and in_tested_range("pettingzoo")

    def text_aware_dtype_check(expected, seen, recursed_keys):
        # PettingZoo's AEC test compares numpy dtypes; a text observation has none, so check its type.
        if isinstance(expected, UnicodeText):
            assert isinstance(seen, str), f"observation {seen!r} is not text"
            return
        numeric_dtype_check(expected, seen, recursed_keys)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns that text observations are not numpy arrays
        parallel_api_test(fresh(), num_cycles=50)
        if replaceable:
            api_test_module._test_observation_space_compatibility = text_aware_dtype_check
            try:
                api_test_module.api_test(parallel_to_aec(fresh()), num_cycles=50)
            finally:
                api_test_module._test_observation_space_compatibility = numeric_dtype_check
    if not replaceable:
        warnings.warn("check_env skipped PettingZoo's AEC api_test: it needs pettingzoo's private "
                      "_test_observation_space_compatibility and a version in this package's declared range "
                      "(docs/compatibility.md#private-internals).", stacklevel=3)


def _check_spaces(env: Any) -> None:
    observations, infos = env.reset(seed=0)
    assert env.agents == env.possible_agents, "all agents are live after reset"
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent), "spaces must be cached"
        assert env.action_space(agent) is env.action_space(agent), "spaces must be cached"
        assert env.observation_space(agent).contains(observations[agent]), f"{agent}'s observation is not in its space"
        for key in ("task_id", "turn"):
            assert key in infos[agent], f"infos[{agent!r}] lacks {key!r}"


def _random_episode(env: Any, seed: int) -> list[tuple]:
    """Play one episode with seeded random replies; return everything observable."""
    rng = np.random.default_rng(seed)
    observations, infos = env.reset(seed=seed)
    trace = [(observations, _stable(infos))]
    while env.agents:
        actions = {a: _random_reply(rng) for a in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        trace.append((observations, rewards, terminations, truncations, _stable(infos)))
    return trace


def _random_reply(rng: np.random.Generator) -> str:
    pieces = ["def helper(x):\n    return x\n", "def f(*a):\n    return 0\n", "Sure! ", "word " * 30, "", "\ud800"]
    return "".join(rng.choice(pieces, size=int(rng.integers(1, 4))))


def _stable(infos: dict) -> dict:
    """Infos without timing fields, which legitimately differ between runs."""
    drop = ("details",)
    return {agent: {k: v for k, v in info.items() if k not in drop} for agent, info in infos.items()}


def _check_determinism(fresh: Callable[[], Any], seed: int) -> None:
    if not getattr(fresh(), "deterministic_feedback", True):
        return  # a reviewer model's feedback legitimately varies; its env says so
    assert _random_episode(fresh(), seed) == _random_episode(fresh(), seed), (
        "the same seed and replies must give the same episode (observations, rewards, infos)"
    )


def _check_junk_replies(env: Any, seed: int) -> None:
    for junk in JUNK_REPLIES:
        env.reset(seed=seed)
        while env.agents:
            _, rewards, _, _, infos = env.step({agent: junk for agent in env.agents})
            for agent, reward in rewards.items():
                assert isinstance(reward, float) and math.isfinite(reward), f"junk reply gave reward {reward!r}"
        assert all("reward_components" in info for info in infos.values()), "infos must carry reward components"


def _check_bad_calls(env: Any, seed: int) -> None:
    unstarted = copy.deepcopy(env)
    _expect(RuntimeError, lambda: unstarted.step({a: "" for a in env.possible_agents}), "step before reset")
    _, infos = env.reset(seed=seed)
    agents = list(env.agents)
    active = [a for a in agents if infos[a].get("active", True)]
    _expect(TypeError, lambda: env.step({a: 42 for a in agents}), "a non-string reply")
    _expect(TypeError, lambda: env.step([("x", "y")]), "actions that are not a dict")
    _expect(ValueError, lambda: env.step({**{a: "" for a in agents}, "intruder": ""}), "an unknown agent")
    _expect(ValueError, lambda: env.step({a: "" for a in agents if a != active[0]}), "a missing agent")
    while env.agents:
        env.step({a: "" for a in env.agents})
    _expect(RuntimeError, lambda: env.step({a: "" for a in agents}), "step after the episode ended")


def _expect(error: type[Exception], call: Callable[[], Any], what: str) -> None:
    try:
        call()
    except error as raised:
        assert str(raised), f"{what} raised {error.__name__} without a message"
        return
    raise AssertionError(f"{what} must raise {error.__name__}")


def _check_branching(env: Any, seed: int) -> None:
    env.reset(seed=seed)
    branch = copy.deepcopy(env)
    _, original_rewards, *_ = env.step({a: "" for a in env.agents})
    transcript = _transcript(env)
    branch.step({a: "def helper(x):\n    return x\n" for a in branch.agents})
    assert _transcript(env) == transcript, "stepping a deep copy must not change the original"
    assert isinstance(original_rewards, dict)


def _transcript(env: Any) -> Any:
    """The episode's text in any render mode (``render()`` for an env without ``transcript()``)."""
    return env.transcript() if hasattr(env, "transcript") else env.render()


def _check_task_selection(env: Any) -> None:
    first, infos = env.reset(seed=1, options={"task_id": 0})
    task_id = infos[env.possible_agents[0]]["task_id"]
    again, _ = env.reset(seed=2, options={"task_id": task_id})
    assert first == again, "options={'task_id': ...} must open the same problem whatever the seed"
    _expect(ValueError, lambda: env.reset(seed=3, options={"taskid": task_id}), "a misspelt reset option")
