"""PettingZoo's own tests on every current env id: ``parallel_api_test`` on the env, ``api_test`` on
``pettingzoo.utils.conversions.parallel_to_aec(env)``, ``render_test`` on every render mode.

One check of ``api_test`` is replaced, and only for text spaces: ``_test_observation_space_compatibility``
compares ``space.dtype == observation.dtype``, and a text observation (a ``str``) has no ``dtype``. The
replacement checks that the observation is a ``str`` (its space's ``contains`` is still checked by
PettingZoo). ``test_unpatched_aec_test_fails_only_on_the_dtype_check`` proves that this is the only
failure; ``docs/compatibility.md`` says the same.
"""

from __future__ import annotations

import importlib
import warnings

import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test
from pettingzoo.utils.conversions import parallel_to_aec

import llm_coop_envs
from llm_coop_envs.core import CoopEnv
from llm_coop_envs.core.spaces import UnicodeText
from tests.toy_task import SecretWordTask


def current_ids() -> list[str]:
    """The newest version of every bundled env name (older versions are deprecated)."""
    newest: dict[str, str] = {}
    for env_id in llm_coop_envs.registered_ids():
        spec = llm_coop_envs.spec(env_id)
        if not str(spec.entry_point).startswith("llm_coop_envs."):
            continue  # ids the tests register
        if spec.name not in newest or spec.version > llm_coop_envs.spec(newest[spec.name]).version:
            newest[spec.name] = env_id
    return sorted(newest.values())


CURRENT_IDS = current_ids()
API_TEST = importlib.import_module("pettingzoo.test.api_test")  # the module (the package exports the function)


@pytest.fixture
def text_aware_aec_test(monkeypatch):
    """``api_test`` with its dtype comparison made text-aware for ``UnicodeText`` spaces only."""
    numeric_check = API_TEST._test_observation_space_compatibility

    def text_aware(expected, seen, recursed_keys):
        if isinstance(expected, UnicodeText):
            assert isinstance(seen, str), f"observation {seen!r} is not text"
            return
        numeric_check(expected, seen, recursed_keys)

    monkeypatch.setattr(API_TEST, "_test_observation_space_compatibility", text_aware)
    return api_test


def test_there_are_current_ids():
    assert {"coop_basics-v2", "coop_procedural-v1", "tldr-v5", "arxiv_intro-v5"} <= set(CURRENT_IDS)
    assert "coop_basics-v0" not in CURRENT_IDS


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_parallel_api_test(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns that text observations are not numpy arrays
        parallel_api_test(llm_coop_envs.make(env_id), num_cycles=50)


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_aec_api_test_on_parallel_to_aec(env_id, text_aware_aec_test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text_aware_aec_test(parallel_to_aec(llm_coop_envs.make(env_id)), num_cycles=50)
        text_aware_aec_test(llm_coop_envs.make_aec(env_id, protocol="sequential", num_turns=2), num_cycles=50)


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_render_test(env_id, capsys):
    render_test(lambda render_mode=None: llm_coop_envs.make_aec(env_id, render_mode=render_mode))
    assert "=== Task" in capsys.readouterr().out  # the "human" run printed the episode


def test_unpatched_aec_test_fails_only_on_the_dtype_check():
    # If PettingZoo starts accepting text observations, drop the fixture above and update the docs.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AttributeError, match="'str' object has no attribute 'dtype'") as raised:
            api_test(parallel_to_aec(CoopEnv(SecretWordTask(), num_turns=2)), num_cycles=20)
    frames = [entry.name for entry in raised.traceback]
    assert frames[-1] == "_test_observation_space_compatibility"


def test_the_replaced_check_still_checks_numeric_spaces(text_aware_aec_test):
    import gymnasium
    import numpy as np

    check = API_TEST._test_observation_space_compatibility
    check(UnicodeText(), "any text", [])
    with pytest.raises(AssertionError, match="not text"):
        check(UnicodeText(), b"bytes", [])
    with pytest.raises(AssertionError):
        check(gymnasium.spaces.Box(0, 1, (2,), dtype=np.float32), np.zeros(2, dtype=np.float64), [])
