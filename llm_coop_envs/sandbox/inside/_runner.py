"""The forked child, once _confine.py confined it: run the untrusted program, then answer the
judge's calls.

Runs inside a fork of the warm interpreter and never sees a test: the judge (_judge.py, another
process, through _monitor.py) sends calls -- a name of the program's namespace and plain-data arguments -- over the
socket on CHANNEL_FD, and this side sends back the result as plain data (_codec.py) or the
exception it raised as (type name, capped message). Nothing the program prints counts, and
nothing in this process is worth forging: a forged frame is no more than a value the program
could have returned.
"""

from __future__ import annotations

import builtins
import marshal
import os
import signal
import struct
import sys
import time

import _codec
import _plain

CHANNEL_FD = 3  # where _confine.py puts the socket to the judge

# Bound at import, before any untrusted code runs: a program that replaces builtins, os.read or
# os.write must not change what this side sends (it could only hurt its own answers anyway).
_exec, _compile, _isinstance, _type, _str = exec, compile, isinstance, type, str
_read, _write, _setitimer, _set_handler = os.read, os.write, signal.setitimer, signal.signal
_ITIMER_REAL = signal.ITIMER_REAL
_HEADER = struct.Struct("!I")
_unmarshal = marshal.loads
_monotonic = time.monotonic
_BUILTINS = dict(builtins.__dict__)  # for tests that fall back to running here
_SYNTAX_TYPES = (SyntaxError, ValueError, UnicodeError)


class _SoftTimeout(BaseException):
    """Raised by SIGALRM inside a call that ran past the time the judge gave it."""


def _on_alarm(signum, frame):
    raise _SoftTimeout()


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the program may have replaced or closed them
            pass


def _send(message: dict) -> None:
    _flush_output()  # what the program printed reaches the judge before the answer does
    body = _codec.dumps(message).encode("ascii")
    data = _HEADER.pack(len(body)) + body
    while data:
        data = data[_write(CHANNEL_FD, data):]


def _read_exact(n: int) -> bytes | None:
    chunks = []
    while n > 0:
        chunk = _read(CHANNEL_FD, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(namespace: dict) -> dict | None:
    """The judge's next message (references resolved to the program's objects); None when the
    judge hung up: the run is over."""
    header = _read_exact(_HEADER.size)
    if header is None:
        return None
    body = _read_exact(_HEADER.unpack(header)[0])
    return None if body is None else _codec.loads(body, namespace.get, capped=False)


def _describe(exc: BaseException) -> list:
    """[type name, message] of an exception raised by untrusted code, never raising itself."""
    name = _type(exc).__name__
    try:
        message = _str(exc)
    except BaseException:  # a hostile __str__
        message = "<unprintable exception>"
    if _type(message) is not _str:
        message = "<unprintable exception>"
    return [(name if _type(name) is _str else "<unnamed>")[:200], message[:_codec.MAX_MESSAGE]]


def compiled(program: str) -> object:
    """The program compiled (compiling runs none of its code), or the exception compiling raised,
    which its setup then reports."""
    try:
        return _compile(program, "<program>", "exec")
    except BaseException as exc:
        return exc


def _run_setup(code: object, namespace: dict) -> dict:
    try:
        if _isinstance(code, BaseException):
            raise code
    except _SYNTAX_TYPES as exc:
        etype, message = _describe(exc)
        return {"status": "syntax_error", "etype": etype, "msg": message,
                "line": getattr(exc, "lineno", None), "col": getattr(exc, "offset", None)}
    except BaseException as exc:  # MemoryError, RecursionError: too big to compile here
        etype, message = _describe(exc)
        return {"status": "error", "etype": etype, "msg": message}
    try:
        _exec(code, namespace)
    except BaseException as exc:
        etype, message = _describe(exc)
        return {"status": "error", "etype": etype, "msg": message}
    return {"status": "ok"}


def _bind_error(namespace: dict, entry_point: str | None) -> dict | None:
    if entry_point and entry_point not in namespace:
        return {"status": "error", "etype": "NameError",
                "msg": f"the program defines no {entry_point!r}"}
    return None


def run(request: dict, code: object = None) -> None:
    """Program, then calls until the judge hangs up; the child exits right after (os._exit).
    `code`: the program as compiled() left it, when compiled ahead (_isolated.py)."""
    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    setup = _run_setup(compiled(request["program"]) if code is None else code, namespace)
    bind = _bind_error(namespace, request.get("entry_point")) if setup["status"] == "ok" else None
    _send({"setup": setup, "bind": bind})
    if setup["status"] != "ok" or bind is not None:
        return
    while True:
        message = _receive(namespace)
        if message is None:
            return
        if "batch" in message:
            if not _run_batch(message, namespace):
                return
            continue
        if not _reply(_answer(message, namespace)):
            return


def _reply(answer: dict) -> bool:
    """Sends one answer; False when the program exited (SystemExit): the run is over."""
    try:
        _send(answer)
    except BaseException as exc:  # the value is not plain data (or too large)
        _send({"i": answer["i"], "not_plain": _describe(exc)[1]})
    return not answer.get("exit")


def _run_batch(message: dict, namespace: dict) -> bool:
    """Calls sent ahead by the judge: made one after another, each under its own alarm (the
    test's time, never past the run's deadline), each answer sent as soon as it is known. At
    the run's deadline the rest are left unanswered: the judge ends the run as timed out."""
    first, budget, deadline = message["i"], message["budget"], message["deadline"]
    for offset, (name, args, kwargs) in enumerate(message["batch"]):
        left = deadline - _monotonic()
        if left <= 0:
            return True
        call = {"call": name, "args": args, "kwargs": kwargs, "budget": min(budget, left)}
        if not _reply({"i": first + offset, **_call(call, namespace)}):
            return False
    return True


def _answer(message: dict, namespace: dict) -> dict:
    index = message.get("i")
    if "call" in message:
        return {"i": index, **_call(message, namespace)}
    if "fallback" in message:
        return {"i": index, "verdict": _run_fallback(message, namespace)}
    return {"i": index, "names": _look_up(message.get("names") or [], namespace)}


def _look_up(names: list, namespace: dict) -> dict:
    """For each name the program defines: its value when plain data, else "other" (the judge
    then calls it or passes it by reference)."""
    found = {}
    for name in names:
        if _type(name) is _str and name in namespace:
            value = namespace[name]
            try:
                _codec.dumps(value)
                found[name] = ["value", value]
            except BaseException:
                found[name] = ["other"]
    return found


def _with_alarm(budget_s: float, action):
    """action() under a SIGALRM after budget_s; ("timeout", None) when it fired."""
    _set_handler(signal.SIGALRM, _on_alarm)
    _setitimer(_ITIMER_REAL, max(budget_s, 0.001))
    try:
        try:
            return "ok", action()
        finally:
            _setitimer(_ITIMER_REAL, 0)
    except _SoftTimeout:
        return "timeout", None


def _call(message: dict, namespace: dict) -> dict:
    name, args, kwargs = message["call"], message["args"], message["kwargs"]
    if name not in namespace:
        return {"raised": ["NameError", f"name {name!r} is not defined"]}
    function = namespace[name]
    try:
        state, value = _with_alarm(message["budget"], lambda: function(*args, **kwargs))
    except BaseException as exc:
        return {"raised": _describe(exc), "exit": _isinstance(exc, SystemExit)}
    if state == "timeout":
        return {"timeout": True}
    return {"value": value}  # run() checks that it is plain data when it sends it


def _run_fallback(message: dict, namespace: dict) -> dict:
    """A test the judge could not split into calls runs here, guarded (_guard.py), in a fresh
    namespace with the builtins as they were before the program ran."""
    fresh = {"__name__": "__main__", "__builtins__": dict(_BUILTINS), _plain.NAME: _plain.plain}
    for name in message["bind"]:
        if name in namespace:
            fresh[name] = namespace[name]
    entry_point = message.get("entry_point")
    if entry_point:
        fresh["candidate"] = namespace.get(entry_point)
    try:
        _exec(_compile(message["context"], "<context>", "exec"), fresh)
        code = _unmarshal(message["fallback"])
        state, _ = _with_alarm(message["budget"], lambda: _exec(code, fresh))
    except BaseException as exc:
        etype, msg = _describe(exc)
        status = "failed" if _isinstance(exc, AssertionError) else "error"
        return {"status": status, "etype": etype, "msg": msg}
    if state == "timeout":
        return {"status": "timeout"}
    return {"status": "passed"}
