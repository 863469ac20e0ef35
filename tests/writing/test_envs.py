"""Both writing envs through the public API: registry, check_env, task selection, feedback."""

import pytest

import llm_coop_envs
from llm_coop_envs.testing import check_env

IDS = ["tldr-v0", "arxiv_intro-v0", "tldr-v2", "arxiv_intro-v2"]


@pytest.mark.parametrize("num_turns", [1, 3])
@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id, num_turns):
    check_env(llm_coop_envs.make(env_id, split="test", num_turns=num_turns))


@pytest.mark.parametrize("env_id", IDS)
def test_sequential_protocol_passes_check_env(env_id):
    check_env(llm_coop_envs.make(env_id, split="test", protocol="sequential"), quick=True)


@pytest.mark.parametrize("env_id", ["tldr-v5", "arxiv_intro-v5"])
def test_v5_without_the_claims_extra_fails_at_make_naming_it(env_id, monkeypatch):
    from llm_coop_envs.writing import claims

    monkeypatch.setattr(claims, "EXTRA_MODULES", (*claims.EXTRA_MODULES, "a_module_nobody_installed"))
    with pytest.raises(ImportError, match=r"llm-coop-envs\[claims\].*a_module_nobody_installed"):
        llm_coop_envs.make(env_id, split="test")
