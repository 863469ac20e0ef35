"""The registry of problem families: name -> seeded generator ``generate(rng, level) -> Draft``; the
cooperative level (``coop_procedural-v2``) has a generator of its own per family (:mod:`.cooperative`)."""

from __future__ import annotations

import random
from collections.abc import Callable

from llm_coop_envs.coding.procedural.draft import Draft
from llm_coop_envs.coding.procedural.families import heldout, numbers, tables, text
from llm_coop_envs.coding.procedural.families.cooperative import COOPERATIVE

Generator = Callable[[random.Random, int], Draft]

TRAIN_FAMILIES: dict[str, Generator] = {
    "bonus_scores": numbers.bonus_scores,
    "order_totals": numbers.order_totals,
    "clamp_readings": numbers.clamp_readings,
    "neighbour_gaps": numbers.neighbour_gaps,
    "digit_sums": numbers.digit_sums,
    "bucket_counts": numbers.bucket_counts,
    "tag_words": text.tag_words,
    "initials": text.initials,
    "code_fees": tables.code_fees,
    "valid_codes": tables.valid_codes,
    "level_labels": tables.level_labels,
    "convert_amounts": tables.convert_amounts,
}
HELDOUT_FAMILIES: dict[str, Generator] = {
    "letter_points": heldout.letter_points,
    "longest_run": heldout.longest_run,
    "mask_codes": heldout.mask_codes,
    "category_weights": heldout.category_weights,
}
FAMILIES: dict[str, Generator] = {**TRAIN_FAMILIES, **HELDOUT_FAMILIES}
LEVELS = (1, 2, 3)
"""The levels of ``coop_procedural-v0`` and ``-v1``."""
COOPERATIVE_LEVEL = 4
"""The level the pair can only solve together (``coop_procedural-v2``)."""


def draft_for(family: str, rng: random.Random, level: int) -> Draft:
    """The family's draft at ``level``, the cooperative level included."""
    if level == COOPERATIVE_LEVEL:
        return COOPERATIVE[family](rng)
    return FAMILIES[family](rng, level)
