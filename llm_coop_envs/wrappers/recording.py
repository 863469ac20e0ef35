"""Record every finished episode of a CoopEnv as one JSON line: problem, turns, replies, rewards."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any


class TranscriptRecorder:
    """Wraps a ParallelEnv; appends a JSON record to ``path`` whenever an episode ends.

    The wrapper forwards everything else to the env, so trainers and tests use it unchanged.
    """

    _lock = threading.Lock()  # several branched copies may finish episodes at once

    def __init__(self, env: Any, path: str | Path) -> None:
        self.env = env
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._turns: list[dict[str, Any]] = []
        self._task_id: str | None = None

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not yet set (e.g. during copying): don't recurse into ourselves
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        self._turns, self._task_id = [], next(iter(infos.values()), {}).get("task_id")
        return observations, infos

    def step(self, actions: dict[str, str]):
        result = self.env.step(actions)
        _, rewards, _, _, infos = result
        any_info = next(iter(infos.values()), {})
        self._turns.append({"turn": any_info.get("turn"), "replies": dict(actions), "rewards": dict(rewards),
                            "components": any_info.get("reward_components", {})})
        if not self.env.agents:
            self._write()
        return result

    def _write(self) -> None:
        record = {"env": getattr(getattr(self.env, "spec", None), "id", None), "task_id": self._task_id,
                  "steps": self._turns}
        line = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False)
        with self._lock, self.path.open("a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(line + "\n")

    def __deepcopy__(self, memo: dict) -> TranscriptRecorder:
        clone = copy.copy(self)
        clone.env = copy.deepcopy(self.env, memo)
        clone._turns = [dict(t) for t in self._turns]
        return clone
