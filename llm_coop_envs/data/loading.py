"""Find and read a dataset's rows.

Resolution order (the first that applies wins):

1. ``data_path=``: a JSON list or JSON Lines file given by the user;
2. the directory named by the ``LLM_COOP_DATA_DIR`` environment variable, holding the dataset's
   file name (``coop_humaneval.json``, ``mbpp.json``, ``tldr.jsonl``, ``arxiv_abstracts.jsonl``);
3. the Hugging Face Hub: the split's file downloaded once into the Hub cache (:mod:`.hub`; no
   ``datasets`` package needed), also served from that cache offline;
4. otherwise, at once and without retries, a :class:`DataNotFoundError` listing these ways.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
from pathlib import Path
from typing import Any

from llm_coop_envs.data.hub import HubUnavailable, hub_rows

DATA_DIR_VARIABLE = "LLM_COOP_DATA_DIR"

Row = dict[str, Any]


class DataNotFoundError(FileNotFoundError):
    """No source could provide the dataset; the message lists the ways to provide it."""


@dataclasses.dataclass(frozen=True)
class DatasetSource:
    """Where one dataset lives: its local file name and its Hub id, split and field mapping."""

    file_name: str
    hub_id: str
    hub_split: str
    rename: tuple[tuple[str, str], ...] = ()
    """(source field, project field) pairs applied to rows from any source when the field is missing."""


DATASETS: dict[str, DatasetSource] = {
    "coop_humaneval": DatasetSource("coop_humaneval.json", "OpenMLRL/CoopHumanEval", "test"),
    "mbpp": DatasetSource("mbpp.json", "OpenMLRL/MBPP", "test"),
    "tldr": DatasetSource("tldr.jsonl", "trl-lib/tldr", "test"),
    "arxiv_abstracts": DatasetSource(
        "arxiv_abstracts.jsonl",
        "OpenMLRL/arXiv_abstract",
        "test",
        rename=(("abstract", "abstract_text"), ("id", "article_id")),
    ),
}


def load_rows(dataset: str, data_path: str | os.PathLike | None = None) -> list[Row]:
    """The rows of ``dataset`` (a key of :data:`DATASETS`) from the first source that has them."""
    if dataset not in DATASETS:
        raise ValueError(f"Unknown dataset {dataset!r}; known: {sorted(DATASETS)}.")
    source = DATASETS[dataset]
    if data_path is not None:
        return _normalise(_read_file(Path(data_path)), source)
    data_dir = os.environ.get(DATA_DIR_VARIABLE)
    if data_dir and (Path(data_dir) / source.file_name).is_file():
        return _normalise(_read_cached(str(Path(data_dir) / source.file_name)), source)
    return _normalise(_from_hub(dataset, source), source)


def _normalise(rows: list[Row], source: DatasetSource) -> list[Row]:
    renamed = []
    for row in rows:
        row = dict(row)
        for old, new in source.rename:
            if new not in row and old in row:
                row[new] = row[old]
        renamed.append(row)
    return renamed


@functools.lru_cache(maxsize=16)
def _read_cached(path: str) -> tuple[Row, ...]:
    # Envs are made many times (trainers, tests); read each file once per process.
    return tuple(_read_file(Path(path)))


def read_rows(path: str | os.PathLike) -> list[Row]:
    """Rows of a JSON list (``.json``) or JSON Lines file (any other suffix); ``.gz`` is decompressed."""
    return _read_file(Path(path))


def _read_file(path: Path) -> list[Row]:
    if path.is_dir():
        raise IsADirectoryError(
            f"{str(path)!r} is a directory; data_path names a data file (JSON or JSON Lines). "
            f"To use a folder of the datasets' files, set {DATA_DIR_VARIABLE}={path}."
        )
    if not path.is_file():
        raise DataNotFoundError(f"Data file {str(path)!r} does not exist.")
    compressed = path.suffix == ".gz"
    text = _text(path, compressed)
    is_list = (path.with_suffix("") if compressed else path).suffix == ".json"
    try:
        rows = json.loads(text) if is_list else _json_lines(text)
    except ValueError as error:  # json's own error, or a JSON Lines line's
        raise ValueError(f"{path} is not valid JSON{'' if is_list else ' Lines'}: {error}") from None
    if isinstance(rows, dict):  # {"train": [...]} or {"data": [...]}: accept a single list value
        lists = [v for v in rows.values() if isinstance(v, list)]
        rows = lists[0] if len(lists) == 1 else rows
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path} must hold a list of JSON objects (one per problem).")
    _refuse_duplicate_ids(rows, path)
    return rows


def _refuse_duplicate_ids(rows: list[Row], path: Path) -> None:
    """Two problems under one ``task_id`` would make ``reset(options={"task_id": ...})`` and every
    per-problem record ambiguous."""
    seen: dict[Any, int] = {}
    for number, row in enumerate(rows, 1):
        task_id = row.get("task_id")
        if task_id is None:
            continue
        if task_id in seen:
            raise ValueError(f"{path}: task_id {task_id!r} appears twice (problems {seen[task_id]} and {number}); "
                             "give each problem its own task_id.")
        seen[task_id] = number


def _text(path: Path, compressed: bool) -> str:
    try:
        data = gzip.decompress(path.read_bytes()) if compressed else path.read_bytes()
        return data.decode("utf-8")
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as error:
        raise ValueError(
            f"{path} is not a UTF-8 text file ({type(error).__name__} at its start or byte "
            f"{getattr(error, 'start', '?')}): data files are JSON or JSON Lines text, optionally gzip-compressed "
            "with a '.gz' suffix."
        ) from None


def _json_lines(text: str) -> list[Row]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:  # its own position is within the line: name the file's line
            raise ValueError(f"line {number}, column {error.colno}: {error.msg}") from None
    return rows


def _from_hub(dataset: str, source: DatasetSource) -> list[Row]:
    try:
        return hub_rows(source.hub_id, source.hub_split)
    except HubUnavailable as error:
        raise DataNotFoundError(no_data_message(dataset, str(error))) from None


def no_data_message(dataset: str, reason: str) -> str:
    """The one message for a dataset that no source has: why, then every way to provide it."""
    source = DATASETS[dataset]
    return (
        f"No data for {dataset!r}: {reason}. Give it data in one of these ways:\n"
        f"  - data_path='rows.jsonl' (your own JSON list or JSON Lines file, optionally .gz);\n"
        f"  - set {DATA_DIR_VARIABLE} to a folder holding {source.file_name!r};\n"
        f"  - with internet, nothing to do: {source.hub_id!r} is downloaded from the Hugging Face Hub once and "
        "cached (HF_ENDPOINT names a mirror)."
    )
