"""Dataset files from the Hugging Face Hub, through ``huggingface_hub``'s cached file downloads.

A dataset repo is listed, the file(s) of the wanted split are picked (JSON, JSON Lines or Parquet,
sharded or not) and downloaded into the Hub cache; later loads use the cache, also offline. The
``datasets`` package is not needed. Without a connection nothing waits: a short connection probe
(or ``HF_HUB_OFFLINE=1``) sends the load straight to the cache, and an empty cache is an error.
``HF_ENDPOINT`` names another server that speaks the Hub's file API (a mirror, or a test server).
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 3.0
DOWNLOAD_TIMEOUT_S = 10.0
JSON_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
READABLE_SUFFIXES = (*JSON_SUFFIXES, ".parquet")

Row = dict[str, Any]


class HubUnavailable(Exception):
    """The Hub cannot give the dataset (offline with nothing cached, no such repo, no readable file)."""


def hub_rows(repo_id: str, split: str) -> list[Row]:
    """The rows of ``split`` of the dataset repo ``repo_id``, downloaded once and cached."""
    try:
        import huggingface_hub  # noqa: F401  (a base dependency, but say so clearly if it is missing)
    except ImportError:
        raise HubUnavailable("the 'huggingface_hub' package is not installed") from None
    endpoint = os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")
    reason = offline_reason(endpoint)
    paths: list[Path] = []
    if reason is None:
        try:
            paths = _downloaded_files(repo_id, split, endpoint)
        except HubUnavailable as error:  # e.g. the Hub is down: a cached copy still serves
            reason = str(error)
    paths = paths or _cached_files(repo_id, split)
    if not paths:
        raise HubUnavailable(f"{reason}, and {repo_id!r} is not in the Hugging Face cache")
    return [row for path in paths for row in _read(path)]


def offline_reason(endpoint: str) -> str | None:
    """Why the Hub cannot be asked now (None when it can): offline mode, or no connection to it."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE"):
        return "HF_HUB_OFFLINE is set"
    parts = urlsplit(endpoint)
    if os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy"):
        return None  # the proxy decides what is reachable; huggingface_hub's own timeouts apply
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=PROBE_TIMEOUT_S):
            return None
    except OSError as error:
        return f"{parts.hostname}:{port} cannot be reached ({error.strerror or type(error).__name__})"


def _downloaded_files(repo_id: str, split: str, endpoint: str) -> list[Path]:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        names = HfApi(endpoint=endpoint).list_repo_files(repo_id, repo_type="dataset")
        chosen = choose_files(names, split, repo_id)
        return [
            Path(hf_hub_download(repo_id, name, repo_type="dataset", endpoint=endpoint, etag_timeout=DOWNLOAD_TIMEOUT_S))
            for name in chosen
        ]
    except (HfHubHTTPError, OSError) as error:  # a missing repo, auth, a dropped connection
        raise HubUnavailable(f"{endpoint} could not give {repo_id!r}: {type(error).__name__}: {error}") from None


def _cached_files(repo_id: str, split: str) -> list[Path]:
    """The split's files in the newest cached snapshot of the repo's main branch (none if not cached)."""
    from huggingface_hub import scan_cache_dir

    try:
        cache = scan_cache_dir()
    except Exception:  # no cache folder yet
        return []
    for repo in cache.repos:
        if repo.repo_type == "dataset" and repo.repo_id == repo_id:
            for revision in repo.revisions:
                if "main" in revision.refs:
                    names = {str(f.file_path.relative_to(revision.snapshot_path)): f.file_path for f in revision.files}
                    return [names[name] for name in choose_files(list(names), split, repo_id)]
    return []


def choose_files(names: list[str], split: str, repo_id: str) -> list[str]:
    """The readable files of ``split``: those whose path names the split (``data/test-00000-of-00001.parquet``,
    ``test.jsonl``), JSON preferred over Parquet; else the repo's only readable file."""
    readable = sorted(n for n in names if n.endswith(READABLE_SUFFIXES) and not n.startswith("."))
    token = re.compile(rf"(^|[/_.-]){re.escape(split)}([/_.-]|$)")
    of_split = [n for n in readable if token.search(n)]
    candidates = of_split or (readable if len(readable) == 1 else [])
    if not candidates:
        raise HubUnavailable(
            f"{repo_id!r} has no JSON, JSON Lines or Parquet file for the {split!r} split (files: {sorted(names)})"
        )
    as_json = [n for n in candidates if n.endswith(JSON_SUFFIXES)]
    return as_json or candidates


def _read(path: Path) -> list[Row]:
    if path.suffix != ".parquet":
        from llm_coop_envs.data.loading import read_rows

        return read_rows(path)
    try:
        import pyarrow.parquet
    except ImportError:
        raise HubUnavailable(f"the Hub file {path.name} is Parquet, which needs 'pyarrow' (pip install pyarrow)") from None
    return pyarrow.parquet.read_table(path).to_pylist()
