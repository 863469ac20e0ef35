"""The judge's line to one forked run: calls over a socket, output capture, deadlines.

Runs in the judge process (_judge.py), which never executes untrusted code. Every frame from the
run is decoded by the strict plain-data codec, one at a time, only when the judge waits for it,
with one budget per frame and the wait's deadline; a frame that is not plain data, an answer out
of order, a frame over the size cap or one that comes before the judge asked for it (left
unread) ends the run as tampered with. A run that misses its deadline, or dies, ends too; the
exception raised into the test code says which.
"""

from __future__ import annotations

import builtins
import collections
import os
import select
import signal
import socket
import struct
import time

import _codec

_HARD_GRACE_S = 0.5  # after the run's own alarm should have fired, the judge kills
_HEADER = struct.Struct("!I")
_MAX_FRAME = _codec.MAX_BYTES + 4096
# The setup report: a status, a type name, two capped messages (12 bytes a character at most,
# escaped). A frame the program wrote while it loaded is read as this report: it gets no more.
_MAX_SETUP_FRAME = 64 * 1024
# Exceptions that the iteration protocol, generators or the interpreter take as control flow, not
# as failure: a StopIteration rebuilt as itself ends `all(map(candidate, xs))` early and the
# assert passes. Rebuilt as ProgramError instead (BaseExceptions such as GeneratorExit,
# KeyboardInterrupt and SystemExit never are: they are not Exceptions).
_CONTROL_FLOW = (StopIteration, StopAsyncIteration)


class RunOver(BaseException):
    """The run cannot answer any more calls (dead, killed, or broke the protocol). A
    BaseException, so that a test's own `except Exception` cannot swallow it."""


class TestTimeout(BaseException):
    """The current test ran past test_timeout_s; the run itself may go on."""

    __test__ = False


class NeedsFallback(BaseException):
    """A call's arguments are not plain data: the test cannot be judged outside the run."""


class NotPlainResult(AssertionError):
    """The program returned something that is not plain data: the test fails."""


class ProgramError(Exception):
    """An exception the program raised whose type is not a builtin one."""


def rebuild(etype: object, message: object) -> BaseException:
    """The program's exception as an exception of the judge: the builtin type of that name when
    there is one (so `except ValueError` in a test works) and it means failure, not control flow;
    else ProgramError, reported under the program's type name (a clean identifier)."""
    etype = _codec.type_name(etype)
    message = message if isinstance(message, str) else ""
    kind = getattr(builtins, etype, None)
    exc: BaseException = ProgramError(message)
    if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, _CONTROL_FLOW):
        try:
            exc = kind(message)
        except Exception:  # a constructor that wants other arguments
            pass
    exc.remote_type = etype  # type: ignore[attr-defined]
    return exc


class Proxy:
    """A name of the program's namespace: calling it is a call in the child; passed as an
    argument, it travels as a reference to that name."""

    __slots__ = ("name", "_session")

    def __init__(self, name: str, session: "Session") -> None:
        self.name, self._session = name, session

    def __call__(self, *args, **kwargs):
        return self._session.call(self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"<{self.name} (runs in the sandbox)>"


class _Capture:
    def __init__(self, cap: int) -> None:
        self.data, self.cap, self.dropped = bytearray(), cap, 0

    def feed(self, chunk: bytes) -> None:
        room = max(self.cap - len(self.data), 0)
        self.data += chunk[:room]
        self.dropped += max(len(chunk) - room, 0)

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.dropped} bytes dropped]" if self.dropped else "")


def _call_key(name: str, args: tuple, kwargs: dict) -> str:
    return _codec.dumps([name, list(args), kwargs], refs=Proxy)


def _exit_info(status: int) -> dict:
    if os.WIFSIGNALED(status):
        return {"signal": signal.Signals(os.WTERMSIG(status)).name}
    return {"code": os.waitstatus_to_exitcode(status)}


class Session:
    """One run seen from the judge: its setup report, then calls, then its facts."""

    def __init__(self, pid: int, fds: dict[str, int], limits: dict, pidfd: int,
                 exit_status) -> None:
        """`pidfd`: the run's first process (not the judge's child: the warm interpreter's
        forking side started it); `exit_status()`: its wait status once it is dead."""
        self.pid, self.limits = pid, limits
        self.exit_status = exit_status
        self.start = time.monotonic()
        self.run_deadline = self.start + limits["timeout_s"]
        self.test_deadline: float | None = None
        # Isolated runs (_isolated.py): the channel is the run's first process's, which sends
        # each test's child's own socket; calls go over that socket.
        self.isolated = bool(limits.get("isolate_tests"))
        self.control = socket.socket(fileno=os.dup(fds["channel"])) if self.isolated else None
        self.channel = fds["channel"]
        self.socket = -1 if self.isolated else self.channel
        self.pidfd = pidfd
        self.outputs = {"out": _Capture(limits["max_output_bytes"]),
                        "err": _Capture(limits["max_output_bytes"])}
        self.sinks = {fds["out"]: self.outputs["out"].feed, fds["err"]: self.outputs["err"].feed}
        self.fds = [*fds.values(), pidfd]
        self.buffer = bytearray()
        self.calls = 0
        # Calls sent ahead in a batch (send_batch), oldest first: (index, encoded call).
        self.ahead: collections.deque[tuple[int, str]] = collections.deque()
        self.last_answer = self.start  # when the judge last got an answer (a batched call's start)
        self.in_call = False
        self.alive = True
        self.timed_out: str | None = None
        self.tampered: str | None = None
        self.exit_info: dict | None = None
        # Requests of several programs (_variants.py): each variant is judged as a run of its own,
        # on children of this run's first process; one that ends ends only its variant.
        self.variants = False
        self.final_variant = True  # only the last variant's last test may run in the first process
        self.first_child = False  # the next child is its variant's first
        self.picking = False  # VARIANT was sent, its answer not yet read
        self.first_gone = False  # the run's first process is dead: no variant can run any more
        self._first_status: int | None = None

    # -- frames --------------------------------------------------------------------------------
    def _frame(self, deadline: float, which: str, limit: int) -> dict | None:
        """A complete frame from the buffer, if there is one, decoded by `deadline`."""
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size > limit:
            self._end(tampered=f"a frame of {size} bytes on the call channel")
        if len(self.buffer) < _HEADER.size + size:
            return None
        body = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
        del self.buffer[:_HEADER.size + size]
        try:
            message = _codec.loads(body, deadline=deadline)
        except _codec.OutOfTime:
            self._end(timed_out=which)
        except _codec.NotPlain as exc:
            self._end(tampered=f"unreadable frame on the call channel ({exc})")
        if type(message) is not dict:
            self._end(tampered="unexpected data on the call channel")
        return message

    def receive(self, deadline: float, which: str, limit: int = _MAX_FRAME) -> dict:
        """The run's next frame; RunOver when it dies, breaks the protocol or misses `deadline`."""
        while True:
            message = self._frame(deadline, which, limit)
            if message is not None:
                return message
            left = deadline - time.monotonic()
            if left <= 0:
                self._end(timed_out=which)
            ready, _, _ = select.select([self.socket, self.pidfd, *self.sinks], [], [], left)
            for fd in ready:
                if fd in self.sinks:
                    self._pump(fd)
            if self.socket in ready:
                chunk = os.read(self.socket, 1 << 20)
                self.buffer += chunk
                if not chunk and self._frame(deadline, which, limit) is None:
                    self._end()  # hung up: it exited (or closed the channel)
            elif self.pidfd in ready:
                self._end_run()

    def _pump(self, fd: int) -> None:
        chunk = os.read(fd, 1 << 16)
        if chunk:
            self.sinks[fd](chunk)
        else:
            del self.sinks[fd]  # end of file: stop selecting on it

    def _end(self, timed_out: str | None = None, tampered: str | None = None) -> None:
        self.timed_out = self.timed_out or timed_out
        self.tampered = self.tampered or tampered
        self.stop()
        raise RunOver(tampered or timed_out or "exited")

    def _end_run(self) -> None:
        """The run's first process is gone (or its channel is): so is every variant after this."""
        self.first_gone = True
        self._end()

    # -- what the judge asks -------------------------------------------------------------------
    def setup(self) -> dict:
        report = self.receive(self.run_deadline, "run", _MAX_SETUP_FRAME)
        self.last_answer = time.monotonic()  # a call sent ahead starts once the program loaded
        return report

    def next_child(self, more: bool, last: bool) -> None:
        """Isolated runs (_isolated.py): the process of the next test (asking for it ends the
        last one's); its socket becomes the call channel. `last`: the last test, which the run's
        first process runs itself, on the run's channel; `more`: a test follows the next one
        (the run forks its child ahead)."""
        if not self.alive:
            raise RunOver("the run is over")
        self._drop_child()
        last = last and self.final_variant
        if self.variants and self.limits.get("stop_at_failure") and self.first_child:
            # Most variants that stop at a failure stop at their first test (the stand-ins of the
            # counterfactual runs): a child forked ahead for their second would be thrown away.
            more = False
        self.first_child = False
        self._command(b"l" if last else b"nm" if more else b"n")  # _isolated's commands
        if self.picking:
            self._picked()
        if last:
            self.socket = self.channel
            return
        data, fds = self._control_message()
        if data != b"c" or len(fds) != 1:  # _isolated.CHILD
            for fd in fds:
                os.close(fd)
            self._end_run() if not data else self._end(tampered="unexpected data on the run's channel")
        self.socket = fds[0]

    def _drop_child(self) -> None:
        """Forgets the last test's process (its socket, what it sent and was sent ahead)."""
        if self.socket not in (-1, self.channel):
            os.close(self.socket)
        self.socket = -1
        self.buffer.clear()
        self.ahead.clear()  # a call its test never made: the process is gone

    def _command(self, command: bytes) -> None:
        try:
            self.control.send(command)
        except OSError:
            self._end_run()

    def _control_message(self) -> tuple[bytes, list[int]]:
        """The run's first process's next message on its channel (a byte, maybe a descriptor)."""
        while True:
            left = self.run_deadline - time.monotonic()
            if left <= 0:
                self._end(timed_out="run")
            ready, _, _ = select.select([self.control, self.pidfd, *self.sinks], [], [], left)
            for fd in ready:
                if fd in self.sinks:
                    self._pump(fd)
            if self.control in ready:
                break
            if self.pidfd in ready:
                self._end_run()
        try:
            data, fds, _, _ = socket.recv_fds(self.control, 1, 1)
        except OSError:  # reset: the first process died with something of ours unread
            self._end_run()
        return data, fds

    # -- variants (_variants.py) ---------------------------------------------------------------
    def begin_variant(self, index: int, final: bool, deadline: float) -> None:
        """Starts judging the variant at `index` as a run of its own (its deadline, verdicts and
        end); the run's first process then forks that variant's children. `final`: no variant
        follows (its last test may run in the first process). RunOver when no variant can run
        any more (the first process is gone) or the first process does not answer by `deadline`."""
        self.variants, self.final_variant = True, final
        self.start = time.monotonic()
        self.run_deadline = min(self.start + self.limits["timeout_s"], deadline)
        self.test_deadline, self.last_answer, self.calls = None, self.start, 0
        self.timed_out = self.tampered = self.exit_info = None
        self.first_child = True
        self._drop_child()
        self.alive = not self.first_gone
        if not self.alive:
            self.exit_info = _exit_info(self._first_exit_status())
            raise RunOver("the run is over")
        # _isolated.VARIANT and its index; the answer is read with the next child's (next_child),
        # which saves a round trip per variant.
        self._command(b"v" + struct.pack("!H", index))
        self.picking = True

    def _picked(self) -> None:
        """Reads the first process's answer to VARIANT: a child forked ahead for the last variant
        was dropped (its socket, sent before the answer, is closed unused)."""
        self.picking = False
        while True:
            data, fds = self._control_message()
            for fd in fds:
                os.close(fd)
            if data == b"a":  # _isolated.PICKED
                return
            if data != b"c":
                self._end_run() if not data else self._end(tampered="unexpected data on the run's channel")

    def variant_facts(self) -> dict:
        """The facts of the variant just judged (the run's first process lives on)."""
        self.stop()
        return {"timed_out": self.timed_out, "tampered": self.tampered, "exit": self.exit_info,
                "duration_s": time.monotonic() - self.start}

    def _nothing_unasked(self) -> None:
        """Before a request: the run has answered everything it was asked, so any byte waiting
        is a frame nobody asked for (written ahead, to be taken for the answer, or to cost the
        judge its decoding): the run ends as tampered with, the frame unread."""
        if not self.buffer and select.select([self.socket], [], [], 0)[0]:
            chunk = os.read(self.socket, 1 << 16)
            if not chunk:
                self._end()  # hung up: it exited (or closed the channel)
            self.buffer += chunk
        if self.buffer:
            self._end(tampered="a frame before the judge asked for one")

    def skip_ahead(self) -> None:
        """Takes the answer to the oldest call sent ahead, for a test that ended before making
        it (its own code failed first): the run made the call all the same."""
        index, key = self.ahead[0]
        name, args, kwargs = _codec.loads(key)
        self._answer_ahead(name, tuple(args), kwargs)

    def request(self, message: dict) -> dict:
        """Sends one request and waits for its answer (within the test's time and the run's)."""
        if not self.alive:
            raise RunOver("the run is over")
        if self.ahead:  # cannot happen: only tests that make no other call are sent ahead
            self.stop()
            raise RuntimeError("the sandbox's judge lost track of the calls sent ahead")
        self._nothing_unasked()
        self.calls += 1
        message["i"] = self.calls
        try:
            # Uncapped: a value the run returned always goes back; only a test's own object that
            # is not plain data (a lambda) moves the test into the run.
            body = _codec.dumps(message, refs=Proxy, capped=False).encode("ascii")
        except _codec.NotPlain:
            raise NeedsFallback() from None
        deadline, which = self.run_deadline, "run"
        if self.test_deadline is not None and self.test_deadline + _HARD_GRACE_S < deadline:
            deadline, which = self.test_deadline + _HARD_GRACE_S, "test"
        self.in_call = True
        try:
            self._send(_HEADER.pack(len(body)) + body, deadline, which)
            answer = self.receive(deadline, which)
        finally:
            self.in_call = False
        if answer.get("i") != self.calls:
            self._end(tampered="an answer out of order")
        return answer

    def send_batch(self, calls: list[tuple[str, tuple, dict]], fresh: bool = False) -> bool:
        """Sends calls ahead, in one frame: the run makes them one after another, each under its
        own alarm and with its own exception capture, and streams an answer per call, which
        call() then takes in order. False (nothing sent) when the arguments are not plain data.
        Only for calls the tests are sure to make, in this order, with nothing in between.
        `fresh`: sent to an isolated run's child before its setup report was read (what waits
        on its socket can only be that report, read next, capped as such)."""
        if not self.alive or self.ahead:
            return False
        try:
            keys = [_call_key(name, args, kwargs) for name, args, kwargs in calls]
            body = _codec.dumps({"batch": [[n, list(a), k] for n, a, k in calls],
                                 "i": self.calls + 1, "budget": self.limits["test_timeout_s"],
                                 "deadline": self.run_deadline}).encode("ascii")
        except _codec.NotPlain:
            return False
        if not fresh:
            self._nothing_unasked()
        self.in_call = True
        try:
            if not self._send(_HEADER.pack(len(body)) + body, self.run_deadline, "run", fresh):
                return False
        finally:
            self.in_call = False
        for key in keys:
            self.calls += 1
            self.ahead.append((self.calls, key))
        self.last_answer = time.monotonic()
        return True

    def _answer_ahead(self, name: str, args: tuple, kwargs: dict) -> dict:
        """The answer to the oldest call sent ahead, which must be this call. Its deadline: the
        test's time from when the run could start it (the previous answer), plus the grace."""
        index, key = self.ahead.popleft()
        try:
            same = _call_key(name, args, kwargs) == key
        except _codec.NotPlain:
            same = False
        if not same:  # cannot happen for the snippets the host picks (_compiled.literal_call)
            self.stop()
            raise RuntimeError("the sandbox's judge lost track of the calls sent ahead")
        deadline, which = self.run_deadline, "run"
        test_end = self.last_answer + self.limits["test_timeout_s"] + _HARD_GRACE_S
        if test_end < deadline:
            deadline, which = test_end, "test"
        self.in_call = True
        try:
            answer = self.receive(deadline, which)
        finally:
            self.in_call = False
        self.last_answer = time.monotonic()
        if answer.get("i") != index:
            self._end(tampered="an answer out of order")
        return answer

    def _send(self, data: bytes, deadline: float, which: str, fresh: bool = False) -> bool:
        """Writes a frame to the run; False, with `fresh`, when a child that has not been heard
        from yet has gone (a program that failed to load exits right after its report, which is
        still there to read: its setup, not this write, then says how the run went)."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                self._end(timed_out=which)
            ready, writable, _ = select.select([self.pidfd, *self.sinks], [self.socket], [], left)
            for fd in ready:
                if fd in self.sinks:
                    self._pump(fd)
            if writable:
                try:
                    view = view[os.write(self.socket, view):]
                except OSError:
                    if fresh:
                        return False
                    self._end()
            elif self.pidfd in ready:
                self._end_run()
        return True

    def budget(self) -> float:
        """Seconds the current test has left (the run's own alarm for a call)."""
        left = min(self.test_deadline or self.run_deadline, self.run_deadline) - time.monotonic()
        if left <= 0:
            raise TestTimeout()
        return left

    def call(self, name: str, args: tuple, kwargs: dict) -> object:
        if self.ahead:
            answer = self._answer_ahead(name, args, kwargs)
        else:
            answer = self.request({"call": name, "args": list(args), "kwargs": kwargs,
                                   "budget": self.budget()})
        if "value" in answer:
            return answer["value"]
        if answer.get("timeout"):
            raise TestTimeout()
        if "raised" in answer:
            etype, message = (list(answer["raised"]) + ["", ""])[:2]
            if answer.get("exit"):
                self.stop()
                self.exit_info = self.exit_info or {"code": 0}
                raise RunOver(f"SystemExit: {message}"[:_codec.MAX_MESSAGE])
            raise rebuild(etype, message)
        if "not_plain" in answer:
            raise NotPlainResult(f"{name} returned {answer['not_plain']}"[:_codec.MAX_MESSAGE])
        self._end(tampered="an answer of unknown kind")

    # -- the end -------------------------------------------------------------------------------
    def stop(self) -> None:
        """Kills the forked child (its own children are the warm interpreter's to sweep)."""
        if not self.alive:
            return
        self.alive = False
        if self.variants and self.socket != self.channel and not self.first_gone:
            # Only this variant's child ends: the first process kills it (SIGKILL) and sweeps
            # what it started before the next child runs; the other variants go on.
            self.exit_info = self.exit_info or {"signal": "SIGKILL"}
            return
        self._kill()
        self.exit_info = self.exit_info or _exit_info(self._first_exit_status())

    def _first_exit_status(self) -> int:
        """The first process's wait status (asked of the forking side once: it reaps it)."""
        if self._first_status is None:
            self._first_status = self.exit_status()
        return self._first_status

    def _kill(self) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def facts(self) -> dict:
        if self.alive or self.variants:  # a normal end: kill it, but leave its teardown (and
            self.alive = False  # reaping) to the warm interpreter, after the host has its answer
            self._kill()
        self._drain_outputs()
        for fd in self.fds:
            os.close(fd)
        if self.isolated:
            self.control.close()
            if self.socket not in (-1, self.channel):
                os.close(self.socket)
        return {"timed_out": self.timed_out, "tampered": self.tampered, "exit": self.exit_info,
                "stdout": self.outputs["out"].text(), "stderr": self.outputs["err"].text(),
                "duration_s": time.monotonic() - self.start}

    def _drain_outputs(self) -> None:
        """Reads whatever is buffered right now, without waiting for writers that may still live."""
        for fd in list(self.sinks):
            while fd in self.sinks and select.select([fd], [], [], 0)[0]:
                self._pump(fd)
