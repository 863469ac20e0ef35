"""The writing reward's thresholds are written once: in each version's ``LevelConfig``. The docs'
table is generated from them (``docs/hooks/writing_levels.py``), and the env docstrings describe the
levels in words and link to that table instead of repeating its numbers."""

import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest

from llm_coop_envs.writing import Band, arxiv_intro, tldr

HOOK = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "writing_levels.py"


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location("writing_levels_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _column(table: str, version: str) -> list[str]:
    lines = table.splitlines()
    index = [cell.strip() for cell in lines[0].strip("|").split("|")].index(f"`{version}`")
    return [[cell.strip() for cell in line.strip("|").split("|")][index] for line in lines[2:]]


def test_the_table_has_a_column_per_registered_version(hook):
    header = hook.levels_table().splitlines()[0]
    for version in (*tldr.VERSION_LEVELS, *arxiv_intro.VERSION_LEVELS):
        assert f"`{version}`" in header


def test_the_table_follows_the_config(hook, monkeypatch):
    moved = dataclasses.replace(tldr.VERSION_LEVELS["tldr-v2"], length_ratio=Band(1.2, 1.7, 2.9, 4.5))
    monkeypatch.setitem(tldr.VERSION_LEVELS, "tldr-v2", moved)
    column = _column(hook.levels_table(), "tldr-v2")
    assert "full 1.7–2.9, 0 at 1.2 and 4.5" in column
    assert column[-1] == "**6**" and _column(hook.levels_table(), "arxiv_intro-v0")[-1] == "**3**"


def test_versions_without_a_check_show_a_dash(hook):
    v0, v2 = _column(hook.levels_table(), "tldr-v0"), _column(hook.levels_table(), "tldr-v2")
    assert v0.count("—") > v2.count("—") and any("tau" in row for row in hook.levels_table().splitlines())


@pytest.mark.parametrize("module", [tldr, arxiv_intro])
def test_env_docstrings_link_to_the_table_instead_of_repeating_it(module):
    reward_section = module.__doc__.split('## Reward (')[1].split("## Arguments")[0]
    assert "writing.md#reward-levels" in reward_section
    assert not re.search(r"\d\.\d", reward_section.split("**grader**")[0]), "a threshold is restated in the docstring"


@pytest.mark.parametrize("module", [tldr, arxiv_intro])
def test_every_default_number_is_in_the_table(hook, module):
    version, config = list(module.VERSION_LEVELS.items())[-1]
    column = " ".join(_column(hook.levels_table(), version))
    bands = (config.length_ratio, config.overlap, config.on_source, config.coverage, config.complementarity)
    numbers = [*config.first_words, *config.second_words, config.min_distinct_ratio, config.min_function_word_share,
               config.max_copied_fraction, config.max_in_order_share, *config.min_text_on_source,
               config.order.max_reversed, config.order.min_pairs, config.copy_ngram, *config.category_scores[1:],
               config.transition_density.ideal_high, config.transition_density.high,
               *(value for band in bands for value in (band.low, band.ideal_low))]
    missing = [n for n in numbers if f"{n:g}" not in column]
    assert not missing and f"{config.order.min_share:.0%}" in column


@pytest.mark.parametrize("module", [tldr, arxiv_intro])
def test_env_docstrings_keep_the_version_history(module):
    doc = module.__doc__
    assert "## Version history" in doc and "- v0" in doc and "- v1 (deprecated" in doc and "- v2 (deprecated" in doc and "- v3 (deprecated" in doc and "- v4 (deprecated" in doc and "- v5:" in doc
