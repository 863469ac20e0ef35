"""The coding reward is described once, in ``llm_coop_envs.coding.reward``'s docstring: its numbers
are the module's constants, and the env docstrings point there instead of repeating them."""

import re

import pytest

from llm_coop_envs.coding import coop_basics, coop_humaneval, humaneval, mbpp, reward


def _table_value(component: str) -> float:
    row = next(line for line in reward.__doc__.splitlines() if f"``{component}``" in line and line.startswith("|"))
    return float(re.findall(r"[+−-]\d+\.\d+", row)[-1].replace("−", "-"))


@pytest.mark.parametrize("component,value", [
    ("helper_defined", reward.HELPER_DEFINED), ("main_defined", reward.MAIN_DEFINED), ("syntax", reward.SYNTAX),
    ("uses_helper", reward.USES_HELPER), ("beyond_wrapper", reward.BEYOND_WRAPPER), ("ignored_return", reward.IGNORED_RETURN),
])
def test_the_levels_table_states_the_constants(component, value):
    assert _table_value(component) == value


def test_the_maxima_and_the_execution_reward_are_the_constants():
    doc = " ".join(reward.__doc__.split())
    top = reward.HELPER_DEFINED + reward.MAIN_DEFINED + reward.SYNTAX + reward.TESTS + reward.USES_HELPER + reward.BEYOND_WRAPPER
    solo = reward.MAIN_DEFINED + reward.SYNTAX + reward.TESTS
    assert f"Maximum {top:.1f}." in doc and f"(maximum {solo:.1f})" in doc
    for component, value in (("syntax", reward.EXECUTION_SYNTAX), ("runs", reward.EXECUTION_RUNS), ("tests", reward.EXECUTION_PER_TEST)):
        assert f"``{component}`` | +{value}" in doc


@pytest.mark.parametrize("module", [humaneval, coop_humaneval, mbpp, coop_basics])
def test_env_docstrings_point_to_the_reward_instead_of_repeating_it(module):
    assert "llm_coop_envs.coding.reward" in module.__doc__
    assert "beyond_wrapper" not in module.__doc__ and "+0.4" not in module.__doc__
