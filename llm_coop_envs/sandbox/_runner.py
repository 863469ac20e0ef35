"""The forked child: confine itself, run the untrusted program, then each test, and report.

Runs inside the warm interpreter's fork. Reports go to REPORT_FD as JSON lines tagged with a
per-run nonce; the monitor (_zygote.py) accepts only well-formed, in-order reports. Nothing the
program prints counts.
"""

from __future__ import annotations

import _json
import os
import signal
import sys

import _plain
import _testcache

REPORT_FD = 3

# Bound at import, before any untrusted code runs: a program that replaces builtins (exec,
# isinstance), os.write, or the json module's functions must not change what the harness does.
_exec, _compile, _isinstance, _type, _str = exec, compile, isinstance, type, str
_write, _setitimer, _set_handler = os.write, signal.setitimer, signal.signal
_ITIMER_REAL = signal.ITIMER_REAL
_encode = _json.make_encoder(None, None, _json.encode_basestring_ascii, None, ":", ",",
                             False, False, True)
_MAX_MESSAGE = 2000
_SYNTAX_TYPES = (SyntaxError, ValueError, UnicodeError)


class _SoftTimeout(BaseException):
    """Raised by SIGALRM inside a test that ran past test_timeout_s."""


def _on_alarm(signum, frame):
    raise _SoftTimeout()


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the program may have replaced or closed them
            pass


class _Reporter:
    """Collects report lines and writes them in one go at each point where the monitor must know:
    before a test starts (its deadline begins) and when the run ends. One write per test instead
    of two halves the wake-ups of the monitor."""

    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.lines: list[str] = []

    def add(self, kind: str, **fields) -> None:
        self.lines.append("".join(_encode({"n": self.nonce, "k": kind, **fields}, 0)))

    def send(self) -> None:
        _flush_output()  # output printed so far reaches the monitor before the verdicts do
        data = ("\n".join(self.lines) + "\n").encode("ascii")
        self.lines = []
        while data:
            data = data[_write(REPORT_FD, data):]


def _describe(exc: BaseException) -> tuple[str, str]:
    """Type name and message of an exception raised by untrusted code, never raising itself."""
    name = _type(exc).__name__
    try:
        message = _str(exc)
    except BaseException:  # a hostile __str__
        message = "<unprintable exception>"
    if _type(message) is not _str:
        message = "<unprintable exception>"
    return (name if _type(name) is _str else "<unnamed>")[:200], message[:_MAX_MESSAGE]


def _run_setup(program: str, namespace: dict, report: _Reporter) -> bool:
    try:
        code = _compile(program, "<program>", "exec")
    except _SYNTAX_TYPES as exc:
        etype, message = _describe(exc)
        report.add("setup", status="syntax_error", etype=etype, msg=message,
                   line=getattr(exc, "lineno", None), col=getattr(exc, "offset", None))
        return False
    except BaseException as exc:  # MemoryError, RecursionError: too big to compile here
        etype, message = _describe(exc)
        report.add("setup", status="error", etype=etype, msg=message)
        return False
    try:
        _exec(code, namespace)
    except BaseException as exc:
        etype, message = _describe(exc)
        report.add("setup", status="error", etype=etype, msg=message)
        return False
    report.add("setup", status="ok")
    return True


def _run_test(index: int, code, namespace: dict, bindings: dict, report: _Reporter,
              timeout_s: float) -> bool:
    """Runs one snippet and records its verdict; False when the run must stop (SystemExit)."""
    report.add("start", i=index)
    report.send()
    namespace.update(bindings)
    verdict: dict = {"status": "passed"}
    keep_going = True
    _set_handler(signal.SIGALRM, _on_alarm)
    _setitimer(_ITIMER_REAL, timeout_s)
    try:
        try:
            if _isinstance(code, BaseException):
                raise code
            _exec(code, namespace)
        finally:
            _setitimer(_ITIMER_REAL, 0)
    except _SoftTimeout:
        verdict = {"status": "timeout", "etype": "TimeoutError",
                   "msg": f"test ran longer than {timeout_s:g} s"}
    except BaseException as exc:
        etype, message = _describe(exc)
        failed = _isinstance(exc, AssertionError)
        verdict = {"status": "failed" if failed else "error", "etype": etype, "msg": message}
        keep_going = not _isinstance(exc, SystemExit)
    report.add("test", i=index, **verdict)
    return keep_going


def _compiled_tests(request: dict) -> list:
    """Guarded and compiled before the program runs (by the warm interpreter's cache, or here):
    nothing untrusted can touch the rewrite."""
    compiled = request.get("compiled") or [None] * len(request["tests"])
    return [code if code is not None else _testcache.compile_test(i, source)
            for i, (code, source) in enumerate(zip(compiled, request["tests"]))]


def run(request: dict) -> None:
    """Program, then tests; the child exits right after (os._exit: no atexit hooks run)."""
    report = _Reporter(request["nonce"])
    try:
        _run_all(request, report)
    finally:
        report.send()


def _run_all(request: dict, report: _Reporter) -> None:
    tests = _compiled_tests(request)
    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    if not _run_setup(request["program"], namespace, report):
        return
    bindings = {_plain.NAME: _plain.plain}
    entry_point = request.get("entry_point")
    if entry_point:
        if entry_point not in namespace:
            report.add("bind", status="error", etype="NameError",
                       msg=f"the program defines no {entry_point!r}")
            return
        bindings["candidate"] = namespace[entry_point]
    timeout_s = request["limits"]["test_timeout_s"]
    for index, code in enumerate(tests):
        if not _run_test(index, code, namespace, bindings, report, timeout_s):
            return
    report.add("done")
