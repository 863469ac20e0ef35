"""Checkpoints: trained weights per agent, optimizers, RNG states and the step, written atomically.

Layout of ``<run>/checkpoints/step-00000004/``::

    weights/<key>.safetensors   LoRA matrices of an agent's adapter (or full weights)
    optimizers.pt               one AdamW state per key
    rng.pt                      Python, NumPy and torch generators, one set per rank (a list)
    state.json                  step and the config that produced it

A checkpoint is first written to a ``.partial`` folder, flushed to disk, and renamed into place, so a
crash (even SIGKILL) mid-write never leaves something that looks complete; the trainer writes one only
between steps. Restoring weights, optimizers and RNG makes a resumed
run repeat exactly what an uninterrupted one does (2 + 2 steps = 4 steps).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

CHECKPOINTS = "checkpoints"
PREFIX = "step-"


def save_checkpoint(
    run_dir: Path, step: int, weights: Mapping[str, Mapping[str, torch.Tensor]],
    optimizers: Mapping[str, torch.optim.Optimizer], state: Mapping[str, Any], keep: int = 2,
    rng_per_rank: list[Any] | None = None,
) -> Path:
    """Write ``step``'s checkpoint atomically; ``rng_per_rank`` (default: this process's) is each rank's RNG state."""
    from safetensors.torch import save_file

    root = Path(run_dir) / CHECKPOINTS
    final = root / f"{PREFIX}{step:08d}"
    partial = root / f"{final.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "weights").mkdir(parents=True)
    for key, tensors in weights.items():
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(partial / "weights" / f"{key}.safetensors"))
    torch.save({key: opt.state_dict() for key, opt in optimizers.items()}, partial / "optimizers.pt")
    torch.save(rng_per_rank if rng_per_rank is not None else [rng_state()], partial / "rng.pt")
    (partial / "state.json").write_text(json.dumps({"step": step, **state}, indent=2, default=str), encoding="utf-8")
    _sync(partial)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(partial, final)
    _prune(root, keep)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return None
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and "." not in p.name)
    return done[-1] if done else None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """``{"step", "state", "weights": {key: tensors}, "optimizers": {key: state_dict}, "rng"}``."""
    from safetensors.torch import load_file

    path = Path(path)
    weights = {p.stem: load_file(str(p)) for p in sorted((path / "weights").glob("*.safetensors"))}
    state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    return {
        "step": int(state["step"]),
        "state": state,
        "weights": weights,
        "optimizers": torch.load(path / "optimizers.pt", weights_only=False),
        "rng": torch.load(path / "rng.pt", weights_only=False),
    }


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _sync(folder: Path) -> None:
    """Flush every file of ``folder`` to disk before it is renamed into place."""
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())


def _prune(root: Path, keep: int) -> None:
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and "." not in p.name)
    for old in done[: max(len(done) - max(keep, 1), 0)]:
        shutil.rmtree(old, ignore_errors=True)
