"""Deterministic train/test splits: fixed slices of the dataset's row order.

The coding slices follow the MAGRPO paper's published training configs (OpenMLRL's
LLM_Collab_Code_Generation ``magrpo_*_config.yaml``): ``train_split``/``eval_split`` there are
``test[:50]``/``test[50:66]`` (CoopHumanEval), ``test[33:133]``/``test[:32]`` (HumanEval) and
``test[15:65]``/``test[:15]`` (MBPP). The writing datasets have no published slices here; they take
the first 80 % for training and the rest for testing. ``"all"`` is every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

Row = TypeVar("Row")

SPLITS: dict[str, dict[str, slice]] = {
    "coop_humaneval": {"train": slice(0, 50), "test": slice(50, 66)},
    "humaneval": {"train": slice(33, 133), "test": slice(0, 32)},
    "mbpp": {"train": slice(15, 65), "test": slice(0, 15)},
    "tldr": {"train": slice(0, 400), "test": slice(400, None)},
    "arxiv_abstracts": {"train": slice(0, 906), "test": slice(906, None)},
}


def select_split(rows: Sequence[Row], dataset: str, split: str, *, custom_data: bool = False) -> list[Row]:
    """The rows of ``split`` ("train", "test" or "all").

    A user's own file (``custom_data``) has no published slices: "train"/"test" are then the
    first 80 % / the remaining 20 % of its rows.
    """
    if split == "all":
        return list(rows)
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}.")
    if custom_data or dataset not in SPLITS:
        cut = max(1, int(len(rows) * 0.8))
        chosen = rows[:cut] if split == "train" else rows[cut:]
    else:
        chosen = rows[SPLITS[dataset][split]]
    if not chosen:
        raise ValueError(f"The {split!r} split of {dataset!r} is empty ({len(rows)} rows in all); use split='all'.")
    return list(chosen)
