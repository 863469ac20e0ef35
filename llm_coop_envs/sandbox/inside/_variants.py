"""Several programs in one request, each judged as a run of its own: the coding envs'
counterfactual runs (a program with ``aux`` replaced by each stand-in, ``aux`` alone, the pairings
with reference code), which share a problem's tests and differ only in their program.

One run per program would pay, for each, a confined process of its own (a mount namespace and
tmpfs made and torn down, the fork from the warm interpreter, a round trip to the host). Here the
request's run is confined once, and its first process forks every test's child, of every
variant, from the same state (_isolated.py): a child runs one variant's program afresh and
answers one test's calls, as each test of an isolated run does. So no variant sees another's
state (each child is killed and swept, and the scratch folder emptied, before the next one runs),
and each variant's verdicts are those of a run of its own: its own deadline (`timeout_s` from
when its judging starts, never past the request's), its tests in order, stopped at the first that
does not pass where the limits say so. `skip_after_timeout` ([start, stop) of the variants'
indices): once one of those variants has timed out (the run or a test), the rest of them are not
started, and reported as timed out. A variant whose child dies, hangs up, breaks the protocol
or misses its deadline ends alone, as such a run would (``crashed``, ``timeout``); the others go
on. What a program can still do to the others is what a test's child can do to the next test of
an isolated run: end the run's first process (every variant after it then fails, ``crashed``).
The counterfactual orders its variants so that failing is the only direction this moves (see
llm_coop_envs.coding.dependence).

Every child inherits the request, with every variant's program: the variants of one request are
assembled from the same replies and the problem's reference code, which the pairings' own
programs hold anyway. Output (stdout, stderr) is the run's, not a variant's.
"""

from __future__ import annotations

import signal
import time

import _judge
import _monitor
import _protocol


def judge(about: dict, session: _monitor.Session, host_in: int) -> dict:
    """Reads the request's tests and judges them on each variant in turn; returns the run's facts
    with the facts of each variant (as _judge.judge gives them for a run) under "variants"."""
    marks = about["marks"]
    tests = _protocol.read_frame(host_in)
    marks["tests_read"] = time.monotonic()
    entry_points = about["variants"]
    deadline = time.monotonic() + float(about["limits"].get("budget_s") or 1e9)
    group = range(*(about["limits"].get("skip_after_timeout") or (0, 0)))
    facts: dict = {"variants": []}
    skipping = False
    try:
        for index, entry_point in enumerate(entry_points):
            if time.monotonic() >= deadline:
                break  # the request's budget is spent: the host reports the rest as not started
            if skipping and index in group:
                facts["variants"].append(None)  # not started (see skip_after_timeout)
                continue
            one = _one(index, index + 1 == len(entry_points), entry_point, about, tests, session,
                       deadline)
            facts["variants"].append(one)
            skipping = skipping or (index in group and bool(one.get("timed_out")
                                                            or _test_timed_out(one)))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    facts.update(session.facts())
    marks["facts_ready"] = time.monotonic()
    facts["marks"] = marks
    return facts


def _test_timed_out(facts: dict) -> bool:
    return any(isinstance(v, dict) and v.get("status") == "timeout" for v in facts.get("tests") or ())


def _one(index: int, final: bool, entry_point: object, about: dict, tests: dict,
         session: _monitor.Session, deadline: float) -> dict:
    """One variant's facts, judged as _judge.judge judges a run."""
    facts: dict = {"setup": None, "bind": None, "tests": [], "running": None, "done": False}
    try:
        session.begin_variant(index, final, deadline)
        judging = _judge.Judge({"entry_point": entry_point, "limits": about["limits"]},
                               tests["tests"], tests.get("context") or "", session,
                               tests.get("compiled"))
        _judge.setup_and_run(judging, facts)
    except _monitor.RunOver:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    facts.update(session.variant_facts())
    return facts
