"""Build a coding env from a dataset's rows: the split, the task and the CoopEnv around it."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from llm_coop_envs.coding.extra_hidden import with_extra_hidden
from llm_coop_envs.coding.reference_tests import has_reference, reference_test_sources
from llm_coop_envs.coding.repairs import repair_row
from llm_coop_envs.coding.rules import scoring_rules
from llm_coop_envs.coding.task import CodingTask
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import select_split
from llm_coop_envs.sandbox import SandboxConfig

DEFAULT_SPLIT = "train"
V0_HOLE = (
    "{old} is deprecated: it scores on the very asserts its multi-turn feedback quotes (a policy that "
    "copies the feedback is paid as if it had solved the problem), trusts expected values that judge the "
    "program by itself, and pays the helper levels to replies that fail tests (a reply that calls aux and "
    "passes 1 of 6 tests outscores a correct one). Use {new}: hidden tests score, public tests feed back, "
    "and cooperation pays only when every test passes."
)

V1_HOLE = (
    "{old} is superseded: its cooperation credit is read from the code, so it pays for calls of the "
    "helper that do no work (an identity aux routed through, `_ = aux(n)`, a try that falls back to "
    "main's own code, a helper that redefines builtins main uses), and its feedback lets hidden tests "
    "speak within an episode (hidden pass counts, the exception kinds a program chooses, failing calls, "
    "agents' own identifiers). Use {new}: cooperation is paid only when main fails with aux replaced by "
    "stand-ins, and feedback comes from public tests only."
)


def trusted_rows(dataset: str, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with their known conversion defects repaired and, where a row ships a reference
    solution, every expected value computed from it (one reference process for all rows, cached)."""
    repaired = [repair_row(dataset, row) for row in rows]
    referenced = [i for i, row in enumerate(repaired) if has_reference(row, dataset)]
    sources = reference_test_sources([repaired[i] for i in referenced], dataset)
    for i, source in zip(referenced, sources):
        repaired[i]["test"] = source
    return repaired


def warn_v0(old: str, new: str) -> None:
    """Warn that a ``-v0`` coding env is deprecated, naming its holes (shown by default)."""
    warnings.warn(V0_HOLE.format(old=old, new=new), FutureWarning, stacklevel=3)


def warn_v1(old: str, new: str) -> None:
    """Warn that an id scored by the ``v1`` rules is superseded, naming its holes (shown by default)."""
    warnings.warn(V1_HOLE.format(old=old, new=new), FutureWarning, stacklevel=3)


def coding_env(
    dataset: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    split: str = DEFAULT_SPLIT,
    data_path: str | os.PathLike | None = None,
    reward: Any = "levels",
    sandbox: SandboxConfig | None = None,
    team: str = "pair",
    reward_mode: str = "joint",
    leaky_feedback: bool = False,
    name: str,
    rules: str = "v0",
    counterfactual: bool = True,
    **env_kwargs: Any,
) -> CoopEnv:
    """A CoopEnv over ``split`` of ``rows`` scored by the version's ``rules``; ``env_kwargs`` go to
    :class:`CoopEnv` unchanged. ``rows`` may be a lazy sequence when ``split="all"``."""
    lazy = split == "all" and not isinstance(rows, (list, tuple))
    chosen = rows if lazy else select_split(rows, dataset, split, custom_data=data_path is not None)
    if scoring_rules(rules).example_free_hidden and not lazy:
        chosen = [with_extra_hidden(dataset, row) for row in chosen]
    if scoring_rules(rules).reference_expected and not lazy:
        chosen = trusted_rows(dataset, chosen)
    task = CodingTask(
        chosen, reward=reward, sandbox=sandbox, protocol=env_kwargs.get("protocol", "parallel"),
        team=team, reward_mode=reward_mode, rules=rules, dataset=dataset, leaky_feedback=leaky_feedback,
        counterfactual=counterfactual,
    )
    env = CoopEnv(task, **env_kwargs)
    env.metadata = {**CoopEnv.metadata, "name": name}
    return env
