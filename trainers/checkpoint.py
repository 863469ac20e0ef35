"""Checkpoints through Accelerate's state saving, written atomically.

Layout of ``<run>/checkpoints/step-00000004/``::

    weights/<key>.safetensors    trained tensors of each key: LoRA matrices of an agent's adapter (or full weights)
    modules/<name>.safetensors   each module the algorithm owns (``build_modules``: a value head, a critic)
    optimizer.bin, optimizer_1.bin, ...   one state per key, in the order of ``state.json`` "keys", then
                                 one per owned module, in the order of ``state.json`` "modules"
    random_states_<rank>.pkl     each rank's Python, NumPy and torch (and CUDA) generators
    state.json                   step, keys, number of processes, and the config that produced it
    sharded/                     FSDP only, instead of optimizer*.bin: each rank's shards of the trained
                                 tensors and of each key's optimizer state (torch.distributed.checkpoint)

``Accelerator.save_state`` writes the optimizers and every rank's generators; its model files are
replaced by ``weights/<key>.safetensors`` (hooks registered by :func:`register_weight_hooks`): a
LoRA run saves its adapters, never the frozen base model once per agent. Every rank writes into a
``.partial`` folder; the first rank flushes it to disk and renames it into place, so a crash (even
SIGKILL) mid-write never leaves something that looks complete; the trainer writes one only between
steps. Restoring weights, optimizers and each rank's generators makes a resumed run repeat exactly
what an uninterrupted one does (2 + 2 steps = 4 steps).

Resuming on a different number of processes works (DDP keeps a full replica on every rank): the
weights and optimizers load anywhere; a rank that has no saved generators starts from its seed, and
the problems of each step depend on the number of processes, so such a run continues correctly but
does not repeat any uninterrupted run.

Under FSDP (:mod:`trainers.fsdp`) the optimizers are not Accelerate's: each rank writes its shards
of the trained tensors and of every optimizer state to ``sharded/`` with torch.distributed.checkpoint,
and ``weights/<key>.safetensors`` still holds the whole trained tensors (gathered for the first rank),
so every reader of ``weights/`` works unchanged. Resuming reads ``sharded/`` into the current
sharding, which torch.distributed.checkpoint re-slices when the number of processes changed.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError

CHECKPOINTS = "checkpoints"
PREFIX = "step-"
WEIGHTS = "weights"
MODULES = "modules"
SHARDED = "sharded"


def register_weight_hooks(accelerator: Any, policies: Any, owned: Mapping[str, torch.nn.Module] | None = None,
                          optimizers: Mapping[str, torch.optim.Optimizer] | None = None) -> None:
    """Make ``save_state``/``load_state`` write and read each key's trained tensors (not whole models)
    and the algorithm's ``owned`` modules (prepared or bare), by name; under FSDP also the sharded
    state of the key's ``optimizers`` (which Accelerate does not hold then)."""
    from trainers.distributed import fsdp_settings

    owned = {name: accelerator.unwrap_model(module) for name, module in (owned or {}).items()}
    fsdp_layout = fsdp_settings() is not None  # also with one process: the same checkpoint layout

    def save_weights(models: list, weights: list, output_dir: str) -> None:
        weights.clear()  # Accelerate would write every prepared model's full state dict
        if fsdp_layout:  # every rank takes part in the gathers and writes its shards
            _save_sharded(Path(output_dir) / SHARDED, policies, optimizers or {})
        gather = fsdp_layout or accelerator.is_main_process  # sharded tensors: a gather every rank enters
        tensors = {key: policies.state_dict(key) for key in policies.keys} if gather else {}
        if accelerator.is_main_process:
            save_weights_folder(Path(output_dir), tensors)
            save_weights_folder(Path(output_dir), {n: m.state_dict() for n, m in owned.items()}, MODULES)

    def load_weights(models: list, input_dir: str) -> None:
        models.clear()  # loaded here instead
        if fsdp_layout:
            _load_sharded(Path(input_dir) / SHARDED, policies, optimizers or {})
            return
        if (Path(input_dir) / SHARDED).is_dir():
            raise ValueError(f"The checkpoint {input_dir} was written under FSDP (its optimizer states are in "
                             f"{SHARDED}/): resume it under an FSDP config (configs/accelerate/fsdp2_*.yaml).")
        for key, tensors in read_weights(Path(input_dir)).items():
            policies.load_state_dict(key, tensors)
        saved = read_weights(Path(input_dir), MODULES)
        if set(saved) != set(owned):
            raise ValueError(f"The checkpoint {input_dir} holds the algorithm modules {sorted(saved)}; "
                             f"this run's algorithm owns {sorted(owned)}.")
        for name, tensors in saved.items():
            owned[name].load_state_dict(tensors)

    accelerator.register_save_state_pre_hook(save_weights)
    accelerator.register_load_state_pre_hook(load_weights)


def save_checkpoint(accelerator: Any, run_dir: Path, step: int, state: Mapping[str, Any], keep: int = 2) -> Path:
    """Write ``step``'s checkpoint (every rank calls this; returns when it is in place)."""
    root = Path(run_dir) / CHECKPOINTS
    final = root / f"{PREFIX}{step:08d}"
    partial = root / f"{final.name}.partial"
    if accelerator.is_main_process:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(partial))
    accelerator.wait_for_everyone()  # every rank's generators are written
    if accelerator.is_main_process:
        record = {"step": step, "num_processes": accelerator.num_processes, **state}
        (partial / "state.json").write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
        _sync(partial)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(partial, final)
        _prune(root, keep)
    accelerator.wait_for_everyone()
    return final


class CheckpointError(ValueError):
    """A checkpoint that cannot be read (damaged or incomplete files); the message names it and a way out."""


def damaged(path: Path, what: str) -> CheckpointError:
    return CheckpointError(
        f"The checkpoint {path} cannot be read ({what}): delete that folder to use the checkpoint before it "
        "(a run folder means its latest), or, with none left, start the run again with --resume --overwrite."
    )


def check_checkpoint(path: Path) -> dict[str, Any]:
    """Read what a checkpoint must hold before any model loads: ``state.json`` with its step and keys,
    and a readable ``weights/<key>.safetensors`` per key. Returns ``state.json``; raises
    :class:`CheckpointError` naming the damaged file."""
    from safetensors import safe_open

    path = Path(path)
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
        int(state["step"]), list(state["keys"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise damaged(path, f"state.json: {type(error).__name__}: {error}") from None
    for key in state["keys"]:
        weights = path / WEIGHTS / f"{key}.safetensors"
        try:
            with safe_open(str(weights), framework="pt") as handle:
                list(handle.keys())
        except Exception as error:  # noqa: BLE001 - safetensors raises its own errors for a bad header
            raise damaged(path, f"{weights.relative_to(path)}: {' '.join(str(error).split())}") from None
    return state


def restore_checkpoint(accelerator: Any, path: Path, keys: list[str], modules: list[str] = ()) -> dict[str, Any]:
    """Load weights, optimizers (one per key of ``keys``, then one per owned module of ``modules``, in
    those orders) and this rank's generators from ``path``; returns its ``state.json``. A file that cannot
    be read raises :class:`CheckpointError`."""
    modules = list(modules)
    path = Path(path)
    state = check_checkpoint(path)
    if state.get("keys", keys) != keys:
        raise ValueError(f"The checkpoint {path} trained the weights of {state['keys']}; this run trains {keys}.")
    if state.get("modules", modules) != modules:
        raise ValueError(f"The checkpoint {path} holds the algorithm modules {state['modules']}; "
                         f"this run's algorithm owns {modules}.")
    try:
        accelerator.load_state(str(path))
    except (OSError, EOFError, RuntimeError, pickle.UnpicklingError, SafetensorError) as error:
        raise damaged(path, f"{type(error).__name__}: {' '.join(str(error).split())[:200]}") from error
    return state


def _sharded_state(policies: Any, optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, Any]:
    """What torch.distributed.checkpoint writes and reads in place: the trained tensors (shards under
    FSDP) and each key's optimizer state, by parameter name."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    state: dict[str, Any] = {"weights": {}, "optimizers": {}}
    for key in policies.keys:
        # Only the active adapter's tensors require grad, and torch's state-dict helpers see only
        # those (a fresh optimizer's states are made for them alone)
        policies.activate(policies.agents_of(key)[0])
        state["weights"][key] = {n: p.detach() for n, p in policies.named_trainable(key).items()}
        if key in optimizers:
            state["optimizers"][key] = get_optimizer_state_dict(policies.slot_of_key(key).model, optimizers[key])
    return state


def _save_sharded(folder: Path, policies: Any, optimizers: Mapping[str, torch.optim.Optimizer]) -> None:
    import torch.distributed.checkpoint as dcp

    dcp.save(_sharded_state(policies, optimizers), checkpoint_id=str(folder))


def _load_sharded(folder: Path, policies: Any, optimizers: Mapping[str, torch.optim.Optimizer]) -> None:
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    if not folder.is_dir():
        raise ValueError(f"The checkpoint {folder.parent} was not written under FSDP (it has no {SHARDED}/ folder): "
                         "resume it with the engine that wrote it.")
    state = _sharded_state(policies, optimizers)
    dcp.load(state, checkpoint_id=str(folder))  # weights: in place, re-sliced to this run's shards
    for key, optimizer in optimizers.items():
        policies.activate(policies.agents_of(key)[0])
        set_optimizer_state_dict(policies.slot_of_key(key).model, optimizer, optim_state_dict=state["optimizers"][key])


def latest_checkpoint(run_dir: Path) -> Path | None:
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return None
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and "." not in p.name)
    return done[-1] if done else None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """The trained tensors of a checkpoint without an Accelerator: ``{"step", "state", "weights": {key: tensors}}``."""
    path = Path(path)
    state = check_checkpoint(path)
    return {"step": int(state["step"]), "state": state, "weights": read_weights(path)}


def save_weights_folder(folder: Path, weights: Mapping[str, Mapping[str, torch.Tensor]], sub: str = WEIGHTS) -> None:
    from safetensors.torch import save_file

    if not weights:
        return
    (folder / sub).mkdir(parents=True, exist_ok=True)
    for key, tensors in weights.items():
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(folder / sub / f"{key}.safetensors"))


def read_weights(folder: Path, sub: str = WEIGHTS) -> dict[str, dict[str, torch.Tensor]]:
    from safetensors.torch import load_file

    return {p.stem: load_file(str(p)) for p in sorted((folder / sub).glob("*.safetensors"))}


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
