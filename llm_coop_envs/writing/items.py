"""Dataset rows → :class:`Item`, the immutable problem a writing task works on.

TL;DR rows come in two layouts: the local file's (``id``, ``subreddit``, ``title``, ``post``,
``summary``) and the Hub's ``trl-lib/tldr`` (``prompt`` = "SUBREDDIT: r/…\\n\\nTITLE: …\\n\\nPOST:
…\\n\\nTL;DR:", ``completion`` = " " + the author's TL;DR). arXiv rows have ``abstract_text`` and
``article_id`` (the loader maps the local file's ``abstract``/``id`` onto them) and maybe ``title``.
Rows without an id get ``"<dataset>/<row position in the file>"``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

_TLDR_PROMPT = re.compile(
    r"^\s*SUBREDDIT:\s*(?:r/)?(?P<subreddit>[^\n]*)\n+TITLE:\s*(?P<title>[^\n]*)\n+POST:\s*(?P<post>.*?)\s*(?:TL;DR:\s*)?$",
    re.DOTALL,
)


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    source: str
    """The text the agents write from (the post / the abstract); replies must not copy it."""
    title: str = ""
    subreddit: str = ""
    reference: str | None = None
    """The author's TL;DR, when the row has one."""


class RowError(ValueError):
    """A dataset row lacks the fields a task needs; the message names the row and the fields."""


def _text(row: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = row.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _row_id(row: Mapping[str, Any], names: Sequence[str], dataset: str, position: int) -> str:
    for name in names:
        value = row.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return f"{dataset}/{position}"


def tldr_item(row: Mapping[str, Any], position: int) -> Item:
    """An item from a TL;DR row in either layout (explicit fields win over the parsed prompt)."""
    parsed = _parse_tldr_prompt(_text(row, "prompt") or "")
    post = _text(row, "post") or parsed.get("post")
    if not post:
        raise RowError(
            f"TL;DR row {position} has no post: give it a 'post' field, or a 'prompt' in the trl-lib/tldr "
            f"layout ('SUBREDDIT: r/...\\n\\nTITLE: ...\\n\\nPOST: ...\\n\\nTL;DR:'). Its fields: {sorted(row)}."
        )
    reference = _text(row, "summary", "completion")
    return Item(
        id=_row_id(row, ("id",), "tldr", position),
        source=post.strip(),
        title=(_text(row, "title") or parsed.get("title") or "").strip(),
        subreddit=(_text(row, "subreddit") or parsed.get("subreddit") or "").strip().removeprefix("r/"),
        reference=reference.strip() if reference else None,
    )


def _parse_tldr_prompt(prompt: str) -> dict[str, str]:
    match = _TLDR_PROMPT.match(prompt)
    if match is None:
        return {}
    return {key: value.strip() for key, value in match.groupdict().items() if value and value.strip()}


def arxiv_item(row: Mapping[str, Any], position: int) -> Item:
    """An item from an arXiv row (``abstract_text`` or ``abstract``; ``article_id`` or ``id``)."""
    abstract = _text(row, "abstract_text", "abstract")
    if not abstract:
        raise RowError(
            f"arXiv row {position} has no abstract: give it an 'abstract_text' (or 'abstract') field. "
            f"Its fields: {sorted(row)}."
        )
    return Item(
        id=_row_id(row, ("article_id", "id"), "arxiv", position),
        source=" ".join(abstract.split()),
        title=" ".join((_text(row, "title") or "").split()),
    )


def check_unique_ids(items: Sequence[Item]) -> None:
    seen: dict[str, int] = {}
    for position, item in enumerate(items):
        if item.id in seen:
            raise RowError(
                f"Task id {item.id!r} appears twice (rows {seen[item.id]} and {position}); ids pick problems "
                "in reset(options={'task_id': ...}), so make them unique."
            )
        seen[item.id] = position
