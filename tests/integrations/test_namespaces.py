"""One namespace for the ids in PettingZoo's and Gymnasium's registries, ``llm_coop_envs/<id>`` (the
one the docs name), with ``llm_coop/<id>`` kept as an alias in both."""

from __future__ import annotations

import pytest

import llm_coop_envs  # noqa: F401 - registers the ids

pettingzoo = pytest.importorskip("pettingzoo")
gymnasium = pytest.importorskip("gymnasium")


@pytest.mark.parametrize("namespace", ["llm_coop_envs", "llm_coop"])
def test_both_namespaces_build_the_same_env_in_both_libraries(namespace):
    from pettingzoo.env_registry.registration import parallel_registry

    if f"{namespace}/coop_basics-v2" not in parallel_registry:
        pytest.skip("this PettingZoo has no registry (before 1.27)")
    parallel = pettingzoo.make("parallel", f"{namespace}/coop_basics-v2")
    assert parallel.spec.id == "coop_basics-v2" and parallel.possible_agents == ["helper", "main"]
    aec = pettingzoo.make("aec", f"{namespace}/coop_basics-v2")
    assert aec.possible_agents == ["helper", "main"]
    single = gymnasium.make(f"{namespace}/coop_basics-v2", agent="main")
    observation, _ = single.reset(seed=0)
    assert isinstance(observation, str)
