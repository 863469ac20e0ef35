"""The leaderboard's protocol, written once in ``protocol.json``: env id and kwargs, held-out sets,
algorithms, seeds, budget (learning rate included) and gradient clip norm. ``llm-coop bench`` takes its
defaults from it (``--help`` shows them), and ``--quick`` swaps in a few-minute smoke run that is
labelled "not comparable". Changing the protocol is an edit of that file and nothing else.

A committed result keeps the protocol it ran under beside its records (``protocol.json`` in its results
folder, which :func:`load_protocol` reads too; it has no ``quick`` part). The leaderboard's,
``benchmarks/results/learning/coop_procedural-v0/protocol.json``, ran on ``coop_procedural-v0``; the
file of new benches is the same protocol on the suite's newest version.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.learning.plan import Budget

PROTOCOL_FILE = Path(__file__).with_name("protocol.json")


@dataclasses.dataclass(frozen=True)
class Protocol:
    name: str
    env: str
    env_kwargs: Mapping[str, Any]
    held_out: Mapping[str, Any]
    eval_sets: Mapping[str, Mapping[str, Any]]
    algorithms: tuple[str, ...]
    seeds: tuple[int, ...]
    budget: Budget
    max_grad_norm: float
    quick: Mapping[str, Any]

    def trainer_settings(self, user_settings: Sequence[str] = ()) -> list[str]:
        """The protocol's trainer settings for its env (``--set`` form), leaving out every key the user
        sets: the training kwargs, the held-out set and the clip norm."""
        given = {setting.partition("=")[0].strip() for setting in user_settings}
        settings = {f"env_kwargs.{key}": json.dumps(value) for key, value in self.env_kwargs.items()}
        settings["eval_env_kwargs"] = json.dumps(dict(self.held_out), sort_keys=True)
        settings["max_grad_norm"] = json.dumps(self.max_grad_norm)
        return [f"{key}={value}" for key, value in settings.items() if key not in given]

    @property
    def quick_label(self) -> str:
        return str(self.quick["label"])


def load_protocol(path: Path = PROTOCOL_FILE) -> Protocol:
    values = json.loads(Path(path).read_text(encoding="utf-8"))
    return Protocol(
        name=values["name"], env=values["env"], env_kwargs=values.get("env_kwargs", {}),
        held_out=values.get("held_out", {}), eval_sets=values.get("eval_sets", {}),
        algorithms=tuple(values["algorithms"]), seeds=tuple(values["seeds"]), budget=Budget(**values["budget"]),
        max_grad_norm=float(values.get("max_grad_norm", 1.0)), quick=values.get("quick", {}),
    )
