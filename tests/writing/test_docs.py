"""The env pages (module docstrings) state the numbers the default configs use."""

import pytest

from llm_coop_envs.writing import ARXIV_V2_LEVELS, TLDR_V2_LEVELS, arxiv_intro, tldr


def stated_numbers(config) -> list[str]:
    ratio, overlap, density = config.length_ratio, config.overlap, config.transition_density
    on_source, cover, comp = config.on_source, config.coverage, config.complementarity
    return [
        f"{config.second_words[0]}–{config.second_words[1]}",
        f"{ratio.ideal_low:g} ≤ r ≤ {ratio.ideal_high:g}",
        f"r = {ratio.low:g} and r = {ratio.high:g}",
        f"{overlap.ideal_low:.2f} ≤ J ≤ {overlap.ideal_high:.2f}",
        f"J = {overlap.high:.2f}",
        f"{config.min_distinct_ratio * 100:.0f} %",
        f"{config.min_function_word_share * 100:.0f} % of the words are function words",
        f"{config.max_copied_fraction * 100:.0f} %",
        f"{config.max_in_order_share * 100:.0f} % of its words appear",
        f"word {config.copy_ngram}-grams",
        f"s ≥ {on_source.ideal_low:.2f} (ramp to 0 at {on_source.low:.2f})",
        f"c ≥ {cover.ideal_low:.2f} (ramp to 0 at {cover.low:.2f})",
        f"≥ {comp.ideal_low:.2f}, ramp to 0 at",
        f"s ≥ {config.min_text_on_source[1]:.2f}",
        f"1 up to {density.ideal_high:.2f}, linear to 0 at {density.high:.2f}",
        "0 → 0 (fails), 1 → {:g}, 2 → {:g}, 3 or more → {:g}".format(*config.category_scores[1:]),
        f"(at least {config.order.min_share * 100:.0f} %, else it is left out)",
        f"over at least {config.order.min_pairs} pairs of placed sentences",
        f"at most {config.order.max_reversed:g}".replace("-", "−"),
    ]


@pytest.mark.parametrize("module,config", [(tldr, TLDR_V2_LEVELS), (arxiv_intro, ARXIV_V2_LEVELS)])
def test_docstring_states_the_default_numbers(module, config):
    doc = " ".join(module.__doc__.split())
    missing = [text for text in stated_numbers(config) if text not in doc]
    assert not missing, f"{module.__name__} docstring lacks {missing}"
    assert "## Version history" in module.__doc__ and "- v0" in module.__doc__ and "- v1 (deprecated" in module.__doc__ and "- v2:" in module.__doc__
