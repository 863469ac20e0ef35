"""Each env module's ``env`` builds its current (highest registered) version, older versions are
``env_v<N>``, and making an old id warns with its hole and names the current id."""

from __future__ import annotations

import pytest

import llm_coop_envs
from llm_coop_envs.data.loading import DataNotFoundError


def current_ids() -> dict[str, str]:
    """The highest registered id of each env name."""
    newest: dict[str, str] = {}
    for env_id in llm_coop_envs.registered_ids():
        spec = llm_coop_envs.spec(env_id)
        if spec.name not in newest or spec.version > llm_coop_envs.spec(newest[spec.name]).version:
            newest[spec.name] = env_id
    return newest


def test_every_modules_env_is_its_current_version():
    for name, env_id in current_ids().items():
        assert llm_coop_envs.spec(env_id).entry_point.endswith(":env"), env_id
        for other in llm_coop_envs.registered_ids():
            spec = llm_coop_envs.spec(other)
            if spec.name == name and other != env_id:
                assert spec.entry_point.endswith(f":env_v{spec.version}"), other


@pytest.mark.parametrize("old", ["coop_basics-v0", "tldr-v0", "tldr-v2", "arxiv_intro-v1"])
def test_an_old_id_warns_naming_the_current_id(old):
    current = current_ids()[llm_coop_envs.spec(old).name]
    with pytest.warns(FutureWarning, match=f"Use {current}"):
        try:
            llm_coop_envs.make(old, split="test")
        except DataNotFoundError:
            pass  # the warning comes before the data is read
