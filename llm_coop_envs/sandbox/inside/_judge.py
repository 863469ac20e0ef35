"""The trusted judge: runs a request's test snippets outside the untrusted run.

The warm interpreter itself, long-lived (_zygote.py): for each request its forking side starts the
run's child (so the child's memory never held a test) and passes it here; the judge then reads
the tests from the host, and executes each snippet here, in
a fresh namespace with the real builtins, the problem's trusted context (the prompt's imports and
helper functions) and the standard-library modules the snippet names. The names that the snippet
takes from the program are bound to what the program holds: plain values are copied over, and
everything else becomes a Proxy (_monitor.py) whose calls travel to the child as plain data (_codec.py), with
`candidate` the proxy of the entry point. So a program cannot shadow a builtin, a module or a
prompt function for the tests, cannot fake a comparison, and finds no test, expected value or
secret in its own memory.

A snippet whose call arguments are not plain data (a lambda, an object the test builds) cannot be
judged this way; it falls back to running in the child (see _runner._run_fallback), guarded, and
its verdict is marked "fallback".
"""

from __future__ import annotations

import builtins
import importlib
import json
import marshal
import os
import random
import signal
import socket
import struct
import sys
import time

import _codec
import _compiled
import _guard
import _monitor
import _protocol
import _variants

_STDLIB = frozenset(sys.stdlib_module_names)
# The random module's state when the judge started (seeded from the OS once per warm
# interpreter): every run's tests start from it, so what one run's tests drew (how far they got
# depends on the program) never changes the random inputs of the next run's tests. The runs
# cannot predict it: CPython reseeds `random` from the OS in every forked child.
_RANDOM_STATE = random.getstate()
_STATUSES = ("passed", "failed", "error", "timeout")


class _Test:
    """One snippet, compiled by the host (_compiled.py) or else here; never in the child."""

    def __init__(self, index: int, source: str, suite: object = None) -> None:
        self.index, self.source = index, source
        self.code: object
        self.names: set[str] = set()
        self.call = None  # its one call of `candidate`, when it may be sent ahead
        try:
            self.code, self.names = _compiled.unpack(suite, index) or _compiled.compile_test(index, source)
            self.call = _compiled.unpack_call(suite, index)
        except BaseException as exc:  # reported when the test runs
            self.code = exc

    def guarded(self) -> bytes:
        """The snippet with its asserts guarded (_guard.py), for running in the child."""
        tree = _guard.guard_tree(self.source)
        return marshal.dumps(compile(tree if tree is not None else self.source,
                                     f"<test {self.index}>", "exec"))


def _describe(exc: BaseException) -> tuple[str, str]:
    name = getattr(exc, "remote_type", None) or type(exc).__name__
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable exception>"
    return _codec.type_name(name), message[:_codec.MAX_MESSAGE]


class Judge:
    def __init__(self, request: dict, tests: list[str], context: str,
                 session: _monitor.Session, suite: object = None) -> None:
        self.entry_point = request.get("entry_point")
        self.test_timeout_s = request["limits"]["test_timeout_s"]
        self.stop_at_failure = bool(request["limits"].get("stop_at_failure"))
        self.session = session
        self.context = context
        self.tests = [_Test(i, source, suite) for i, source in enumerate(tests)]
        self.base, self.context_error = self._trusted_namespace(context)
        self.sent_ahead: set[int] = set()

    @staticmethod
    def _trusted_namespace(context: str) -> tuple[dict, BaseException | None]:
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        try:
            exec(compile(context, "<context>", "exec"), namespace)
        except BaseException as exc:
            return namespace, exc
        return namespace, None

    def _on_alarm(self, signum, frame) -> None:
        # During a call the run's own alarm and the call's deadline decide; elsewhere the time
        # is the test's own (trusted) code, stopped here.
        # A run under this uid can send SIGALRM too: one that comes while the timer still runs
        # is not the timer's.
        if not self.session.in_call and signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            raise _monitor.TestTimeout()

    def run(self, facts: dict) -> None:
        signal.signal(signal.SIGALRM, self._on_alarm)
        for position, test in enumerate(self.tests):
            facts["running"] = test.index
            if not self.session.isolated and not self.session.ahead:
                self._send_ahead(position)
            waiting = len(self.session.ahead)
            if self.session.isolated and position:
                verdict = self._fresh_child(position) or self._one(test)
            else:
                verdict = self._one(test)
            if verdict is not None:
                facts["tests"].append(verdict)
            if verdict is None or not self.session.alive:
                return
            if self.stop_at_failure and verdict["status"] != "passed":
                break  # the tests after it are not run
            if self.session.isolated:
                continue  # a call sent ahead and not made dies with the test's child
            if test.index in self.sent_ahead and len(self.session.ahead) == waiting:
                try:
                    self.session.skip_ahead()
                except _monitor.RunOver:
                    return
        facts["running"] = None
        facts["done"] = True

    def setup(self) -> dict:
        """The program's setup report (in an isolated run, the first test's child's)."""
        if not self.session.isolated:
            return self.session.setup()
        return self._child_setup(0)

    def _child_setup(self, position: int) -> dict:
        """Isolated runs: the setup report of the child of the test at `position`. The test's
        call, when it may be sent ahead, goes before the report is read: the child answers it
        right after loading, without waiting for the judge."""
        self.session.next_child(more=position + 2 < len(self.tests),
                                last=position + 1 >= len(self.tests))
        test = self.tests[position] if position < len(self.tests) else None
        if test is not None and self._may_send_ahead(test) and self.session.send_batch(
                [(self.entry_point, *test.call)], fresh=True):
            self.sent_ahead.add(test.index)
        return self.session.setup()

    def _fresh_child(self, position: int) -> dict | None:
        """Isolated runs: the next test's own child, which runs the program afresh; the test's
        verdict when the program does not load there as it did in the first child."""
        first = self._child_setup(position)
        setup = first.get("setup")
        if isinstance(setup, dict) and setup.get("status") == "ok" and first.get("bind") is None:
            return None
        return {"status": "error", "etype": "SandboxError",
                "msg": "the program did not load in this test's own process"}

    def _send_ahead(self, position: int) -> None:
        """Sends the calls of the tests from `position` on that each make one call of `candidate`
        with literal arguments and ask nothing else of the run, in one frame (instead of a round
        trip per test). The tests still run one by one here, in order, and each takes the answer
        to its own call, so each verdict is what calling one by one would give."""
        batch = []
        for test in self.tests[position:]:
            if not self._may_send_ahead(test):
                break
            batch.append(test)
        if len(batch) > 1 and self.session.send_batch(
                [(self.entry_point, *test.call) for test in batch]):
            self.sent_ahead.update(test.index for test in batch)

    def _may_send_ahead(self, test: _Test) -> bool:
        return (test.call is not None and bool(self.entry_point) and self.context_error is None
                and not isinstance(test.code, BaseException) and not self._names(test)[1])

    def _names(self, test: _Test) -> tuple[dict, set[str]]:
        """The standard-library modules the test names, and the names it takes from the program."""
        wanted = test.names - self.base.keys() - builtins.__dict__.keys() - {"candidate"}
        modules, from_program = {}, set()
        for name in wanted:
            if name.split(".")[0] in _STDLIB:
                try:
                    modules[name] = importlib.import_module(name)
                    continue
                except ImportError:
                    pass
            from_program.add(name)
        return modules, from_program

    def _namespace(self, test: _Test) -> dict:
        namespace = dict(self.base)
        modules, from_program = self._names(test)
        namespace.update(modules)
        if from_program:
            found = self.session.request({"names": sorted(from_program)}).get("names")
            for name, kind in (found.items() if isinstance(found, dict) else ()):
                if name in from_program and isinstance(kind, list) and kind:
                    namespace[name] = kind[1] if kind[0] == "value" and len(kind) == 2 \
                        else _monitor.Proxy(name, self.session)
        if self.entry_point:
            namespace["candidate"] = _monitor.Proxy(self.entry_point, self.session)
        return namespace

    def _one(self, test: _Test) -> dict | None:
        """The test's verdict; None when the run ended under it (the result says how)."""
        if self.context_error is not None:
            etype, message = _describe(self.context_error)
            return {"status": "error", "etype": etype, "msg": f"the prompt's code failed: {message}"}
        self.session.test_deadline = time.monotonic() + self.test_timeout_s
        signal.setitimer(signal.ITIMER_REAL, self.test_timeout_s)
        try:
            try:
                if isinstance(test.code, BaseException):
                    raise test.code
                exec(test.code, self._namespace(test))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _monitor.NeedsFallback:
            return self._fallback(test)
        except _monitor.TestTimeout:
            return {"status": "timeout", "etype": "TimeoutError",
                    "msg": f"test ran longer than {self.test_timeout_s:g} s"}
        except _monitor.RunOver as over:
            if str(over).startswith("SystemExit"):
                return {"status": "error", "etype": "SystemExit", "msg": str(over)[12:]}
            return None
        except BaseException as exc:
            etype, message = _describe(exc)
            status = "failed" if isinstance(exc, AssertionError) else "error"
            return {"status": status, "etype": etype, "msg": message}
        return {"status": "passed"}

    def _fallback(self, test: _Test) -> dict | None:
        try:
            answer = self.session.request({
                "fallback": test.guarded(), "context": self.context,
                "bind": sorted(test.names), "entry_point": self.entry_point,
                "budget": self.session.budget()})
        except _monitor.TestTimeout:
            return {"status": "timeout", "etype": "TimeoutError",
                    "msg": f"test ran longer than {self.test_timeout_s:g} s", "fallback": True}
        except _monitor.RunOver:
            return None
        verdict = answer.get("verdict")
        if not isinstance(verdict, dict) or verdict.get("status") not in _STATUSES:
            verdict = {"status": "error", "etype": "SandboxError", "msg": "malformed verdict"}
        # Made by the run: only its fields, the type name checked like any other.
        clean = {"status": verdict["status"], "fallback": True}
        if verdict.get("etype") is not None:
            clean["etype"] = _codec.type_name(verdict["etype"])
        if isinstance(verdict.get("msg"), str):
            clean["msg"] = verdict["msg"][:_codec.MAX_MESSAGE]
        return clean


# The judge's messages to the warm interpreter's forking side, and its answer to DONE.
DONE, WAIT, SWEPT = b"done", b"wait", b"swept"


def serve(host_in: int, host_out: int, control: socket.socket) -> None:
    """The long-lived judge: for each run the forking side (_zygote.py) started, its pid and file
    descriptors arrive on `control`; the judge reads the run's tests from the host, judges them,
    has the forking side sweep the run, then answers the host. Returns when that side
    has gone (the host closed the channel)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # no KeyboardInterrupt from a run's kill()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 1 << 16, 4)
        except OSError:
            return
        if not data:
            return
        try:
            facts = judge(json.loads(data), fds, host_in, control)
            # The run is swept before the host hears of it: once none of its processes is left,
            # none can hurt the next run (a run that killed the forking side is itself reported
            # crashed, and the host retries what it queued behind it on a fresh interpreter).
            control.send(DONE)
            if control.recv(16) != SWEPT:
                return
            _protocol.write_frame(host_out, facts)
        except BaseException:
            os._exit(_protocol.HARNESS_FAILURE)  # the host's channel may be out of step


def judge(about: dict, fds: list[int], host_in: int, control: socket.socket) -> dict:
    """Reads the run's tests and judges them; returns the facts. about["marks"] collects when
    each phase ended (time.monotonic(), for profiling; see benchmarks/perf/sandbox_profile.py)."""
    marks = about["marks"]
    marks["judge_started"] = time.monotonic()
    random.setstate(_RANDOM_STATE)
    channel, out, err, pidfd = fds
    session = _monitor.Session(about["pid"], {"channel": channel, "out": out, "err": err},
                               about["limits"], pidfd, lambda: _exit_status(control))
    if about.get("variants") is not None:  # several programs, each judged as a run of its own
        return _variants.judge(about, session, host_in)
    facts: dict = {"setup": None, "bind": None, "tests": [], "running": None, "done": False,
                   "marks": marks}
    tests = _protocol.read_frame(host_in)
    marks["tests_read"] = time.monotonic()
    try:
        # Unpacked while the child starts and runs the program.
        judging = Judge(about, tests["tests"], tests.get("context") or "", session,
                        tests.get("compiled"))
        marks["tests_compiled"] = time.monotonic()
        setup_and_run(judging, facts, marks)
    except _monitor.RunOver:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    facts.update(session.facts())
    marks["facts_ready"] = time.monotonic()
    return facts


def setup_and_run(judging: Judge, facts: dict, marks: dict | None = None) -> None:
    """Run the program; when it loaded and its entry point bound, judge every test into ``facts``
    (a run's, or one variant's: _variants.py), else mark the facts done."""
    first = judging.setup()
    if marks is not None:
        marks["program_ran"] = time.monotonic()
    facts["setup"], facts["bind"] = first.get("setup"), first.get("bind")
    if isinstance(facts["setup"], dict) and facts["setup"].get("status") == "ok" and facts["bind"] is None:
        judging.run(facts)
        if marks is not None:
            marks["tests_judged"] = time.monotonic()
    else:
        facts["done"] = True


def _exit_status(control: socket.socket) -> int:
    """The run's wait status, from the forking side (its parent, the only one that can wait)."""
    control.send(WAIT)
    answer = control.recv(16)
    if len(answer) != 4:
        raise RuntimeError("the warm interpreter's forking side has gone")
    return struct.unpack("!i", answer)[0]
