"""MkDocs hook: the line ``<!-- writing-levels-table -->`` becomes the table of every writing reward threshold.

The numbers are read from each env version's default :class:`~llm_coop_envs.writing.thresholds.LevelConfig`
(``VERSION_LEVELS`` in ``llm_coop_envs.writing.tldr`` and ``llm_coop_envs.writing.arxiv_intro``), so the
docs say each number once, where the code keeps it, and cannot drift from it.
"""

from __future__ import annotations

from collections.abc import Callable

MARKER = "<!-- writing-levels-table -->"


def _num(value: float) -> str:
    return f"{value:g}"


def _band(band) -> str:
    """A Band in words: where it gives full credit and where its linear ramps reach 0."""
    if band is None:
        return "—"
    if band.ideal_high == band.high == 1.0:  # a share, capped at 1 by nature
        return f"full ≥ {_num(band.ideal_low)}, 0 at {_num(band.low)}"
    if band.low == band.ideal_low == 0:
        return f"full ≤ {_num(band.ideal_high)}, 0 at {_num(band.high)}"
    return f"full {_num(band.ideal_low)}–{_num(band.ideal_high)}, 0 at {_num(band.low)} and {_num(band.high)}"


def _off(value: float, off: float, text: str) -> str:
    return "—" if value == off else text


def _order(config, part: str) -> str:
    order = config.order
    if order is None:
        return "—"
    return {
        "opening": "fails",
        "placement": f"≥ {order.min_share:.0%} of its weighted content words",
        "tau": f"≤ {_num(order.max_reversed)} over ≥ {order.min_pairs} pairs fails",
    }[part]


ROWS: tuple[tuple[str, str, Callable], ...] = (
    ("structure: gates (any fails → every component 0)", "words in the first text",
     lambda c, s: "{}–{}".format(*c.first_words)),
    ("", "words in the second text", lambda c, s: "{}–{}".format(*c.second_words)),
    ("", "distinct words / words, per text (below: degenerate)", lambda c, s: f"≥ {_num(c.min_distinct_ratio)}"),
    ("", "function words / words, per text (below: a keyword list)",
     lambda c, s: _off(c.min_function_word_share, 0.0, f"≥ {_num(c.min_function_word_share)}")),
    ("", "share of a text's word n-grams found in the source (above: copied)",
     lambda c, s: f"≤ {_num(c.max_copied_fraction)} (n = {c.copy_ngram})"),
    ("", "in-order share: longest common word subsequence with the source / words (above: copied with words left out)",
     lambda c, s: _off(c.max_in_order_share, 1.0, f"≤ {_num(c.max_in_order_share)}")),
    ("structure = 0.5 + 0.5 × band", "words(second) / words(first); outside the band: 0.5 and stop",
     lambda c, s: _band(c.length_ratio)),
    ("grounding = band(s) × band(c); scales every later level", "s: IDF-weighted share of the pair's content words found in the source",
     lambda c, s: _band(c.on_source)),
    ("", "c: IDF-weighted share of the source's content words the pair mentions", lambda c, s: _band(c.coverage)),
    ("", "each text's own s, first / second (below: fail)",
     lambda c, s: "—" if c.on_source is None else "≥ {} / ≥ {}".format(*map(_num, c.min_text_on_source))),
    ("complementarity = band", "`added`: share of the second text's source content the first lacks; "
     "`share_gap`: s(second) − s(first); zero credit fails",
     lambda c, s: "—" if c.complementarity is None else f"`{c.complementarity_measure}`: {_band(c.complementarity)}"),
    ("style = band", "Jaccard of the two texts' content words; outside the band: 0 and stop", lambda c, s: _band(c.overlap)),
    ("coherence", "credit by distinct transition categories in the joint text (0, 1, 2, 3+); 0 fails",
     lambda c, s: " / ".join(map(_num, c.category_scores))),
    ("", "× density factor: transition matches per word; above the band: fail (spam)", lambda c, s: _band(c.transition_density)),
    ("", "order: a text opens with a connective that needs a sentence before it", lambda c, s: _order(c, "opening")),
    ("", "order: second text's sentences placed at the source sentence holding", lambda c, s: _order(c, "placement")),
    ("", "order: Kendall's tau of the placed sentences against the source order", lambda c, s: _order(c, "tau")),
    ("rouge", "mean F1 of ROUGE-1/2/L (stemmed), first text vs the author's TL;DR; scored whenever the gates pass",
     lambda c, s: "scored" if s.uses_reference else "—"),
    ("**maximum** (weights all 1.0; +1 with a grader)", "",
     lambda c, s: f"**{_num(sum(getattr(c.weights, n) for n in c.level_names()) + c.weights.rouge * s.uses_reference)}**"),
)


def levels_table() -> str:
    from llm_coop_envs.writing import arxiv_intro, tldr

    columns = [(version, config, module.SPEC) for module in (tldr, arxiv_intro) for version, config in module.VERSION_LEVELS.items()]
    lines = ["| level | what is measured | " + " | ".join(f"`{v}`" for v, _, _ in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for level, measured, cell in ROWS:
        lines.append(f"| {level} | {measured} | " + " | ".join(cell(c, s) for _, c, s in columns) + " |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs) -> str:
    return markdown.replace(MARKER, levels_table()) if MARKER in markdown else markdown
