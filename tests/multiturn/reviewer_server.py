"""A real local OpenAI-compatible reviewer for tests: an HTTP server on 127.0.0.1 with scripted answers.

Each request consumes the next scripted behaviour (the last one repeats). The server records every
request's headers and JSON body, and stops (releasing any hanging handler) when the context exits.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Behaviour = Callable[[dict[str, Any], threading.Event], tuple[int, bytes]]


def completion(content: str) -> Behaviour:
    """Answer 200 with a chat completion whose message is ``content``."""
    body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()
    return lambda request, stop: (200, body)


def suggestions(mapping: Mapping[str, str]) -> Behaviour:
    """Answer with the JSON object the reviewer is asked for."""
    return completion(json.dumps(dict(mapping)))


def status(code: int) -> Behaviour:
    return lambda request, stop: (code, b'{"error": {"message": "scripted failure"}}')


def raw(body: bytes) -> Behaviour:
    """Answer 200 with a body that is not a chat completion."""
    return lambda request, stop: (200, body)


def hang(seconds: float) -> Behaviour:
    """Say nothing for ``seconds`` (or until the server stops), then answer with an empty object."""

    def behaviour(request: dict[str, Any], stop: threading.Event) -> tuple[int, bytes]:
        stop.wait(seconds)
        return 200, b"{}"

    return behaviour


@dataclass
class ReviewerServer:
    behaviours: list[Behaviour]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, headers: Mapping[str, str], body: dict[str, Any]) -> Behaviour:
        """Store the request and return the behaviour scripted for it."""
        with self._lock:
            self.headers.append(dict(headers))
            self.requests.append(body)
            return self.behaviours[min(len(self.requests), len(self.behaviours)) - 1]


@contextmanager
def reviewer_server(*behaviours: Behaviour) -> Iterator[ReviewerServer]:
    """Run a scripted reviewer; ``server.url`` is its base URL (``http://127.0.0.1:<port>/v1``)."""
    state = ReviewerServer(list(behaviours))
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            behaviour = state.record(self.headers, {"path": self.path, **body})
            code, answer = behaviour(body, stop)
            if stop.is_set():
                return
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:  # the client gave up (timeout) before we answered
                pass

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def suggest_for_every_agent() -> Behaviour:
    """Answer each request with one suggestion for every agent whose reply the request shows."""

    def behaviour(request: dict[str, Any], stop: threading.Event) -> tuple[int, bytes]:
        names = re.findall(r"^## The (\S+) agent's reply$", request["messages"][-1]["content"], re.MULTILINE)
        return completion(json.dumps({name: f"Reviewer: tighten the {name} part." for name in names}))(request, stop)

    return behaviour
