"""Add the code and text metrics to finished episodes, from what the env reported and the env's task.

Coding tasks: the cooperation classifier reads the helper's and main's code of the program the env
ran (``infos[agent]["details"]["code"]``, kept in :attr:`EpisodeRecord.code`), so nothing here
assembles a program again. Writing tasks: ROUGE against the item's reference, length ratio, overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchmarks.metrics.cooperation import analyze_cooperation
from benchmarks.metrics.writing import writing_metrics
from benchmarks.records import EpisodeRecord


def annotate(task: Any, records: Iterable[EpisodeRecord]) -> None:
    """Fill ``cooperates``/``scheme`` (coding) or ``writing`` (writing) of each record in place."""
    records = list(records)
    index = _indices(task, {r.task_id for r in records})
    for record in records:
        i = index.get(record.task_id)
        if i is None:
            continue
        if _is_coding(task):
            _annotate_code(task, i, record)
        elif hasattr(task, "items"):
            _annotate_text(task, i, record)


def _indices(task: Any, task_ids: set[str]) -> dict[str, int]:
    """Each task id's index: asked of the task where it can say without a scan (a generated training
    split holds a million problems, built on first use), else by listing the split."""
    finder = getattr(task, "index_of", None)
    found: dict[str, int] = {}
    for task_id in task_ids if callable(finder) else ():
        try:
            index = finder(task_id)
        except ValueError:  # not drawn in this process
            index = None
        if index is not None:
            found[task_id] = index
    if len(found) < len(task_ids):
        found |= {t: i for i in range(len(task)) for t in [task.task_id(i)] if t in task_ids and t not in found}
    return found


def _is_coding(task: Any) -> bool:
    problems = getattr(task, "problems", None)
    return bool(problems) and hasattr(problems[0], "entry_point") and tuple(task.agents) == ("helper", "main")


def _annotate_code(task: Any, i: int, record: EpisodeRecord) -> None:
    if not record.code:  # no verdict (the episode failed before its first joint reply was judged)
        return
    entry_point = task.problems[i].entry_point
    analysis = analyze_cooperation(record.code.get("helper", ""), record.code.get("main", ""), entry_point)
    record.cooperates, record.scheme = analysis.cooperates, analysis.scheme


def _annotate_text(task: Any, i: int, record: EpisodeRecord) -> None:
    item = task.items[i]
    uses_reference = getattr(getattr(task, "spec", None), "uses_reference", False)
    reference = item.reference if uses_reference else None
    record.writing = writing_metrics(record.replies, tuple(task.agents), reference)
