"""Build a writing env: load rows by the package's data rules, pick the split, wrap the task in CoopEnv."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.data import load_rows, select_split
from llm_coop_envs.writing.thresholds import LevelConfig, RewardWeights
from llm_coop_envs.writing.grounding import Salience
from llm_coop_envs.writing.items import Item, check_unique_ids
from llm_coop_envs.writing.claims_judge import ClaimsJudge
from llm_coop_envs.writing.grader import GraderConfig, WritingGrader
from llm_coop_envs.writing.task import WritingSpec, WritingTask


def make_writing_env(
    spec: WritingSpec,
    dataset: str,
    to_item: Callable[[Mapping[str, Any], int], Item],
    default_levels: LevelConfig,
    *,
    split: str = "train",
    data_path: str | os.PathLike | None = None,
    reward: Any = "levels",
    reward_config: LevelConfig | None = None,
    reward_weights: RewardWeights | Mapping[str, float] | None = None,
    grader: WritingGrader | GraderConfig | Mapping[str, Any] | None = None,
    reward_mode: str = "joint",
    language_model: Any = None,
    claims_judge: ClaimsJudge | GraderConfig | Mapping[str, Any] | None = None,
    **env_kwargs: Any,
) -> CoopEnv:
    """The env over ``split`` of ``dataset`` (or of the user's ``data_path`` file); other kwargs go to CoopEnv.

    ``grader`` (off by default) adds the grader level: a dict of :class:`GraderConfig` options such as
    ``{"base_url": "http://127.0.0.1:8000/v1", "model": "..."}``, a GraderConfig or a WritingGrader
    (``judge=`` is refused: "judge" names only the sandbox's test runner).
    ``reward_mode="per_agent"`` gives each role its own reward where the levels separate (:class:`WritingTask`).
    ``language_model`` (``-v3`` only) replaces the scoring model: a path, a Hub id, a ``(model, tokenizer)``
    pair or a :class:`~llm_coop_envs.writing.lm.LanguageModel`; by default the config's (the project's
    small model, loaded at the first scored step).
    ``claims_judge`` (``-v5`` only, off by default) has an OpenAI-compatible endpoint give the claim check's
    verdicts (:mod:`~llm_coop_envs.writing.claims_judge`): a dict of :class:`GraderConfig` options, a GraderConfig or a ClaimsJudge.
    """
    if "judge" in env_kwargs:
        raise TypeError("The writing envs' model grader is grader= (judge= was its name up to 0.1.0).")
    config = reward_config if reward_config is not None else default_levels
    if not isinstance(config, LevelConfig):
        raise TypeError(f"reward_config must be a LevelConfig, got {type(config).__name__}.")
    if reward_weights is not None:
        config = config.with_weights(reward_weights)
    rows = load_rows(dataset, data_path)
    # Items are built before splitting so that generated ids ("tldr/17") are positions in the file.
    items = [to_item(row, position) for position, row in enumerate(rows)]
    check_unique_ids(items)
    chosen = tuple(select_split(items, dataset, split, custom_data=data_path is not None))
    # Word weights come from every row of the file, so a problem scores the same in every split.
    salience = Salience.from_sources(item.source for item in items)
    task = WritingTask(spec, chosen, config, reward, salience, WritingGrader.coerce(grader), reward_mode, language_model,
                       ClaimsJudge.coerce(claims_judge))
    return CoopEnv(task, **env_kwargs)


def version_env(spec: WritingSpec, dataset: str, to_item: Callable[[Mapping[str, Any], int], Item],
                levels: LevelConfig, doc: str, hole: str | None = None,
                current: str | None = None) -> Callable[..., CoopEnv]:
    """The env function of one version of a writing env (what the registry calls); a deprecated
    version (``hole`` given) warns with the hole its reward has, and the ``current`` id, each time it is made."""

    def make(**kwargs: Any) -> CoopEnv:
        if hole is not None:
            warn_deprecated(f"{hole} Use {current}, the current version: it builds with the current code.")
        return make_writing_env(spec, dataset, to_item, levels, **kwargs)

    make.__doc__ = doc
    return make


def warn_deprecated(hole: str) -> None:
    """Warn that an old version is deprecated, naming the hole its reward has (shown by default)."""
    warnings.warn(hole, FutureWarning, stacklevel=3)


def v4_hole(env_id: str, source_name: str) -> str:
    """The hole both ``-v4`` writing ids warn with (measured on ``tldr-v4``; the same reward on both)."""
    return (
        f"{env_id} does not read the facts, normalise the text or check each text's job: hedged contradictions, "
        "quantities in words with changed units, values swapped between slots, antonyms outside a short hand list, "
        f"roles reversed and certainty inflated keep 91-100 % of the genuine reward; the {source_name} copied with "
        "zero-width joiners or look-alike letters 89-92 %; the task restated, advice or a review instead of a "
        "retelling, a retraction appended up to all of it; and one false alarm on an honest pair stops the chain at "
        "consistency (an honest pair earns 2.7 of 7)."
    )
