"""Watch one forked run: collect its reports and output, enforce its deadlines, then clean up.

Runs in the warm interpreter, which never executes untrusted code. A report is accepted only if it
is a JSON line carrying this run's nonce and arrives in the expected order; anything else marks
the run as tampered with.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time

_HARD_GRACE_S = 0.5  # after the in-process alarm should have fired, the monitor kills
_MAX_REPORT_BYTES = 4 * 1024 * 1024


class _Reports:
    """Parses and validates the report stream: setup, then (start i, test i)*, then done."""

    def __init__(self, nonce: str, n_tests: int) -> None:
        self.nonce, self.n_tests = nonce, n_tests
        self.buffer = b""
        self.received = 0
        self.setup: dict | None = None
        self.bind: dict | None = None
        self.tests: list[dict] = []
        self.running: int | None = None
        self.running_since = 0.0
        self.done = False
        self.tampered: str | None = None

    def feed(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > _MAX_REPORT_BYTES:
            self.tampered = "report stream too large"
            return
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if self.tampered is None:
                self._accept(line)

    def _accept(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            ok = isinstance(message, dict) and message.get("n") == self.nonce
        except ValueError:
            ok = False
        if not ok or self.done:
            self.tampered = "unexpected data on the report channel"
            return
        kind = message.get("k")
        expected = self._expected_kinds()
        if kind not in expected:
            self.tampered = f"report {kind!r} out of order"
        elif kind in ("start", "test") and message.get("i") != len(self.tests):
            self.tampered = "test report out of order"
        else:
            self._apply(kind, message)

    def _expected_kinds(self) -> tuple[str, ...]:
        if self.setup is None:
            return ("setup",)
        if self.setup.get("status") != "ok" or self.bind is not None:
            return ()
        if self.running is not None:
            return ("test",)
        return ("start", "bind", "done") if not self.tests else ("start", "done")

    def _apply(self, kind: str, message: dict) -> None:
        fields = {k: message.get(k) for k in ("status", "etype", "msg", "line", "col")}
        if kind == "setup":
            self.setup = fields
        elif kind == "bind":
            self.bind = fields
        elif kind == "start":
            self.running, self.running_since = message["i"], time.monotonic()
        elif kind == "test":
            self.tests.append(fields)
            self.running = None
        elif kind == "done":
            self.done = len(self.tests) == self.n_tests
            if not self.done:
                self.tampered = "done before all tests"


class _Capture:
    def __init__(self, cap: int) -> None:
        self.data, self.cap, self.dropped = bytearray(), cap, 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        self.data += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.dropped} bytes dropped]" if self.dropped else "")


def _exit_info(status: int) -> dict:
    if os.WIFSIGNALED(status):
        return {"signal": signal.Signals(os.WTERMSIG(status)).name}
    return {"code": os.waitstatus_to_exitcode(status)}


def watch(pid: int, fds: dict[str, int], limits: dict, nonce: str, n_tests: int,
          kill_run) -> dict:
    """Follows the run until it reports done, exits, or misses a deadline; returns the facts."""
    start = time.monotonic()
    reports = _Reports(nonce, n_tests)
    outputs = {"out": _Capture(limits["max_output_bytes"]), "err": _Capture(limits["max_output_bytes"])}
    pidfd = os.pidfd_open(pid)
    sinks = {fds["report"]: reports.feed, fds["out"]: outputs["out"].feed, fds["err"]: outputs["err"].feed}
    timed_out, exit_info = None, None
    while reports.tampered is None and not reports.done:
        deadline, which = start + limits["timeout_s"], "run"
        if reports.running is not None:
            test_deadline = reports.running_since + limits["test_timeout_s"] + _HARD_GRACE_S
            if test_deadline < deadline:
                deadline, which = test_deadline, "test"
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = which
            break
        ready, _, _ = select.select(list(sinks) + [pidfd], [], [], left)
        _drain(ready, sinks)
        if pidfd in ready:
            _, status = os.waitpid(pid, 0)
            exit_info = _exit_info(status)
            _drain_available(sinks)
            break
    kill_run(pid)
    os.close(pidfd)
    _drain_available(sinks)
    for fd in fds.values():
        os.close(fd)
    return {
        "setup": reports.setup, "bind": reports.bind, "tests": reports.tests,
        "running": reports.running, "done": reports.done, "tampered": reports.tampered,
        "timed_out": timed_out, "exit": exit_info,
        "stdout": outputs["out"].text(), "stderr": outputs["err"].text(),
        "duration_s": time.monotonic() - start,
    }


def _drain(ready: list[int], sinks: dict) -> None:
    for fd in ready:
        if fd in sinks:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                sinks[fd](chunk)
            else:
                del sinks[fd]  # end of file: stop selecting on it


def _drain_available(sinks: dict) -> None:
    """Reads whatever is buffered right now, without waiting for writers that may still live."""
    for fd, sink in list(sinks.items()):
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del sinks[fd]
                break
            sink(chunk)
