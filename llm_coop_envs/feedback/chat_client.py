"""A minimal client for OpenAI-compatible ``/chat/completions`` endpoints, standard library only.

It keeps no connection or lock between calls (each call opens its own request), so one client can
serve many env copies stepped from parallel threads, and it is safe to deep-copy or pickle.
Every failure becomes a :class:`ReviewerError` whose message names the kind of failure only:
never the request headers, so an API key cannot leak through an error text.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_CHUNK_BYTES = 65_536


class ReviewerError(Exception):
    """The reviewer gave no usable answer; ``str(error)`` is a short, secret-free reason."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.retryable = retryable


def chat_completion(
    url: str,
    payload: Mapping[str, Any],
    *,
    api_key: str | None,
    timeout_s: float,
    max_retries: int,
    backoff_s: float,
    max_response_bytes: int,
) -> str:
    """POST ``payload`` to ``url`` and return the first choice's message content.

    Transport errors, timeouts and the status codes in ``RETRYABLE_STATUS`` are retried up to
    ``max_retries`` times with exponential backoff; other failures raise at once.
    """
    body = json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    for attempt in range(max_retries + 1):
        try:
            raw = _post_once(url, body, headers, timeout_s, max_response_bytes)
            return _message_content(raw)
        except ReviewerError as error:
            if not error.retryable or attempt == max_retries:
                raise
            time.sleep(backoff_s * (2**attempt))
    raise AssertionError("unreachable: the last attempt either returns or raises")


def _post_once(url: str, body: bytes, headers: dict[str, str], timeout_s: float, max_bytes: int) -> bytes:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    deadline = time.monotonic() + timeout_s
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (URL is the user's endpoint)
            return _read_until(response, deadline, max_bytes)
    except urllib.error.HTTPError as error:
        error.close()
        raise ReviewerError(f"HTTP {error.code}", retryable=error.code in RETRYABLE_STATUS) from None
    except TimeoutError:  # socket.timeout is an alias of it since Python 3.10
        raise ReviewerError(f"no answer within {timeout_s:g} s", retryable=True) from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise ReviewerError(f"no answer within {timeout_s:g} s", retryable=True) from None
        raise ReviewerError(f"cannot reach the endpoint ({type(reason).__name__})", retryable=True) from None
    except (OSError, http.client.HTTPException) as error:  # refused, reset, malformed status line...
        raise ReviewerError(f"connection failed ({type(error).__name__})", retryable=True) from None
    except ValueError:  # urllib rejects malformed URLs with ValueError
        raise ReviewerError("malformed endpoint URL") from None


def _read_until(response: Any, deadline: float, max_bytes: int) -> bytes:
    """Read the body in chunks so a server that trickles bytes cannot outlast the wall-clock limit."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise ReviewerError("answer took longer than the timeout", retryable=True)
        chunk = response.read(_CHUNK_BYTES)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise ReviewerError(f"answer larger than {max_bytes} bytes")
        chunks.append(chunk)


def _message_content(raw: bytes) -> str:
    try:
        content = json.loads(raw.decode("utf-8", "replace"))["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ReviewerError("the answer is not a chat completion") from None
    if not isinstance(content, str):
        raise ReviewerError("the chat completion has no text content")
    return content
