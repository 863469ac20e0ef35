"""A local HTTP server speaking the part of the Hugging Face Hub's file API that downloads use.

It serves dataset repos from a dict ``{repo_id: {path: bytes}}``:

- ``GET /api/datasets/<repo>/tree/<revision>[/<path>]``: the file listing (``list_repo_files``);
- ``HEAD``/``GET /datasets/<repo>/resolve/<revision>/<path>``: a file, with the ``X-Repo-Commit`` and
  ``ETag`` headers ``hf_hub_download`` needs to place it in its cache.

Every request path is recorded in ``server.requests``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self, repos: dict[str, dict[str, bytes]]) -> None:
        self.repos = repos
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._answer(with_body=True)

            def do_HEAD(self) -> None:
                self._answer(with_body=False)

            def _answer(self, with_body: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                hub.requests.append(f"{self.command} {path}")
                found = hub._tree(path) if path.startswith("/api/datasets/") else hub._file(path)
                if found is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "RepoNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body, content_type = found
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

        return Handler

    def _split(self, path: str, prefix: str) -> tuple[dict[str, bytes], str] | None:
        # <prefix><owner>/<name>/<kind>/<revision>[/<file path>]
        parts = path[len(prefix) :].split("/")
        repo_id = "/".join(parts[:2])
        if repo_id not in self.repos or len(parts) < 4:
            return None
        return self.repos[repo_id], "/".join(parts[4:])

    def _tree(self, path: str):
        found = self._split(path, "/api/datasets/")
        if found is None:
            return None
        files, _ = found
        listing = [{"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                   for name, data in sorted(files.items())]
        return json.dumps(listing).encode(), "application/json"

    def _file(self, path: str):
        found = self._split(path, "/datasets/")
        if found is None or found[1] not in found[0]:
            return None
        return found[0][found[1]], "application/octet-stream"
