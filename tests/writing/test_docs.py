"""The env pages (module docstrings) state the numbers the default configs use."""

import pytest

from llm_coop_envs.writing import ARXIV_LEVELS, TLDR_LEVELS, arxiv_intro, tldr


def stated_numbers(config) -> list[str]:
    ratio, overlap, density = config.length_ratio, config.overlap, config.transition_density
    return [
        f"{config.second_words[0]}–{config.second_words[1]}",
        f"{ratio.ideal_low:g} ≤ r ≤ {ratio.ideal_high:g}",
        f"r = {ratio.low:g} and r = {ratio.high:g}",
        f"{overlap.ideal_low:.2f} ≤ J ≤ {overlap.ideal_high:.2f}",
        f"J = {overlap.high:.2f}",
        f"{config.min_distinct_ratio * 100:.0f} %",
        f"{config.max_copied_fraction * 100:.0f} %",
        f"word {config.copy_ngram}-grams",
        f"1 up to {density.ideal_high:.2f}, linear to 0 at {density.high:.2f}",
        "0 → 0 (fails), 1 → {:g}, 2 → {:g}, 3 or more → {:g}".format(*config.category_scores[1:]),
    ]


@pytest.mark.parametrize("module,config", [(tldr, TLDR_LEVELS), (arxiv_intro, ARXIV_LEVELS)])
def test_docstring_states_the_default_numbers(module, config):
    doc = " ".join(module.__doc__.split())
    missing = [text for text in stated_numbers(config) if text not in doc]
    assert not missing, f"{module.__name__} docstring lacks {missing}"
    assert "## Version history" in module.__doc__ and "- v0:" in module.__doc__
