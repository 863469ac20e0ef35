"""Hostile programs against the long-lived judge and the calls sent ahead.

Each warm interpreter keeps one judge and one forking side for all its runs, so every attack here
is followed by an honest program on the same warm interpreter: the attack must gain nothing
itself, and must leave nothing that changes the next run's result or costs it its interpreter.
"""

from __future__ import annotations

import dataclasses
import os
import time
import uuid

import pytest

from llm_coop_envs.sandbox import api, run_tests
from llm_coop_envs.sandbox import pool as pools

from .conftest import skip_where_runs_share_the_callers_uid
from .sandbox_watch import run_processes

HONEST = "def f(x):\n    return x + 1\n"
HONEST_TESTS = ["assert candidate(1) == 2", "assert candidate(2) == 3", "assert candidate(3) == 5"]
# Tests the attackers face: sent ahead in one frame (literal arguments).
TESTS = ["assert candidate(1) == 2", "assert candidate(2) == 3", "assert candidate(3) == 4"]

# Writes a raw frame on the judge's channel, as the harness's own side would.
FRAME = """
import json, os, signal, struct, sys, threading, time
def frame(obj):
    body = sys.modules["_codec"].dumps(obj).encode()
    os.write(3, struct.pack("!I", len(body)) + body)
"""

PROTOCOL_ATTACKS = {
    # Forged frames ahead of the real ones: the first is read as the setup report. The rest are
    # left unread (the run tampered with) if they wait before the judge asks for anything, or
    # taken as answers (values the program could have returned, here wrong ones) if they come
    # after its request.
    "forged_setup_and_answers": FRAME + """
frame({"setup": {"status": "ok"}, "bind": None})
for i in (1, 2, 3):
    frame({"i": i, "value": 0, "verdict": {"status": "passed"}, "status": "passed"})
def f(x):
    return 0
""",
    "forged_frames_then_exit": FRAME + """
frame({"setup": {"status": "ok"}, "bind": None})
for i in (1, 2, 3):
    frame({"i": i, "value": 0, "verdict": {"status": "passed"}})
os._exit(0)
""",
    "forged_reference_to_a_function": FRAME + """
def f(x):
    body = b'["d","i",1,"value",["r","f"]]'
    os.write(3, struct.pack("!I", len(body)) + body)
    time.sleep(60)
""",
    "answer_out_of_order": FRAME + """
def f(x):
    if x == 1:
        frame({"i": 2, "value": 3})
    return 0
""",
    "replayed_answer": FRAME + """
def f(x):
    frame({"i": 1, "value": 2})
    return 0
""",
    "answers_ahead_of_the_calls": FRAME + """
def f(x):
    for i in (1, 2, 3):
        frame({"i": i, "value": 0})
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    time.sleep(60)
""",
    "a_verdict_instead_of_an_answer": FRAME + """
def f(x):
    frame({"i": x, "verdict": {"status": "passed"}})
    time.sleep(60)
""",
    "huge_frame_header": FRAME + """
def f(x):
    os.write(3, b"\\xff\\xff\\xff\\xff" + b"[" * 100)
    time.sleep(60)
""",
    "deeply_nested_frame": FRAME + """
def f(x):
    body = b"[" * 200000 + b"]" * 200000
    os.write(3, struct.pack("!I", len(body)) + body)
    time.sleep(60)
""",
    "frame_not_utf8": FRAME + """
def f(x):
    body = b'["d","i",1,"value","\\xff\\xfe"]'
    os.write(3, struct.pack("!I", len(body)) + body)
    time.sleep(60)
""",
    "half_a_frame_then_exit": FRAME + """
def f(x):
    os.write(3, struct.pack("!I", 100) + b"{")
    os._exit(0)
""",
    "channel_closed": "import os\ndef f(x):\n    os.close(3)\n    return x + 1\n",
    "stdout_onto_the_channel": "import os\ndef f(x):\n    os.dup2(1, 3)\n    print('x' * 100)\n    return x + 1\n",
    "builtin_named_exception": "class AssertionError(Exception):\n    pass\n"
                               "def f(x):\n    raise AssertionError('passed')\n",
    "base_exceptions": "def f(x):\n    raise (KeyboardInterrupt, GeneratorExit, StopIteration)[x - 1]\n",
    "harness_timeout_raised": "import sys\ndef f(x):\n    raise sys.modules['_runner']._SoftTimeout()\n",
}

SIGNAL_ATTACKS = {
    "system_exit": "import sys\ndef f(x):\n    sys.exit(0)\n",
    "os_exit": "import os\ndef f(x):\n    os._exit(0)\n",
    "sigkill_itself": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "sigstop_itself": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSTOP)\n",
    # The forking side (its parent) and the judge (PID 1 under bwrap): another uid.
    "signals_to_parent_and_judge": """
import os, signal
def f(x):
    for pid in (os.getppid(), 1):
        for sig in (signal.SIGALRM, signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    return 0
""",
    "kill_everything_it_can": "import os, signal\ndef f(x):\n    os.kill(-1, signal.SIGKILL)\n",
    "alarm_ignored": "import signal\ndef f(x):\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                     "    while True:\n        pass\n",
    "alarm_blocked": "import signal, time\ndef f(x):\n"
                     "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n    time.sleep(60)\n",
    "alarm_left_for_the_next_call": "import signal\ndef f(x):\n"
                                    "    signal.setitimer(signal.ITIMER_REAL, 0.01)\n    return 0\n",
    "daemon_keeps_the_channel": """
import os, time
def f(x):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(0.3)
            try:
                body = b'["d","i",1,"value",2]'
                os.write(3, len(body).to_bytes(4, "big") + body)
            except OSError:
                pass
            time.sleep(60)
        os._exit(0)
    return 0
""",
    "fork_bomb": "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n"
                 "        except OSError:\n            pass\n",
}


def _warm_interpreters() -> set[int]:
    return {worker.proc.pid for pool in pools._pools.values() for worker in pool._idle}


def _honest_run_is_unaffected(cfg) -> None:
    result = run_tests(HONEST, HONEST_TESTS, "f", cfg)
    assert result.status == "ok", result
    assert [t.status for t in result.tests] == ["passed", "passed", "failed"]


def _attack(program: str, cfg, may_cost_the_interpreter: bool = False):
    """The attacker's result; checks that the honest program after it, on the same warm
    interpreter (or, where the attack may kill it, on a fresh one), gets its own verdicts."""
    _honest_run_is_unaffected(cfg)  # the pool is warm
    interpreters = _warm_interpreters()
    result = run_tests(program, TESTS, "f", cfg)
    _honest_run_is_unaffected(cfg)
    if not may_cost_the_interpreter:
        assert _warm_interpreters() == interpreters, "the attack cost a warm interpreter"
    return result


@pytest.mark.parametrize("name", sorted(PROTOCOL_ATTACKS))
def test_protocol_attacks_gain_nothing_and_leave_nothing(name, cfg) -> None:
    result = _attack(PROTOCOL_ATTACKS[name], cfg)
    assert result.passed == 0, result
    well_formed = ("answers_ahead_of_the_calls",
                   "builtin_named_exception", "base_exceptions", "harness_timeout_raised")
    # ok, or crashed when the judge writes after the exit / finds frames it did not ask for
    if name not in ("forged_frames_then_exit", "forged_setup_and_answers"):
        assert result.status == ("ok" if name in well_formed else "crashed"), result


@pytest.mark.parametrize("name", sorted(SIGNAL_ATTACKS))
def test_signal_and_exit_attacks_gain_nothing_and_leave_nothing(name, hostile_cfg) -> None:
    if name == "kill_everything_it_can":
        skip_where_runs_share_the_callers_uid(hostile_cfg.backend, name)
    # As an ordinary user a run shares the forking side's uid, and may kill it (documented): that
    # ends only its own run, and the next run gets a fresh warm interpreter.
    killer = name in ("kill_everything_it_can", "signals_to_parent_and_judge")
    result = _attack(SIGNAL_ATTACKS[name], hostile_cfg,
                     may_cost_the_interpreter=killer and os.geteuid() != 0)
    assert result.passed == 0, result
    assert run_processes() == []


def test_a_later_run_cannot_read_an_earlier_runs_program(cfg) -> None:
    """A sibling sample's solution must not be readable from a later run's memory (the forking
    side, which every run is forked from, never holds a program)."""
    secret = uuid.uuid4().hex
    victim = f"# SIBLING_SOLUTION_{secret}\ndef f(x):\n    return x + 1\n"
    thief = r'''
import ctypes
found = []
prefix = b"SIBLING" + b"_SOLUTION_"
for line in open("/proc/self/maps"):
    fields = line.split()
    low, high = (int(v, 16) for v in fields[0].split("-"))
    if "r" not in fields[1] or fields[-1].startswith("[v") or high - low > 512 << 20:
        continue
    try:
        memory = ctypes.string_at(low, high - low)
    except Exception:
        continue
    at = memory.find(prefix)
    while at >= 0:
        found.append(memory[at + len(prefix):at + len(prefix) + 32].decode("latin-1"))
        at = memory.find(prefix, at + 1)
def f(x):
    return found
'''
    run_tests(victim, ["assert candidate(1) == 2"], "f", cfg)
    result = run_tests(thief, ["seen = candidate(0)\nassert False, repr(seen)"], "f", cfg)
    assert result.status == "ok" and result.tests[0].status == "failed", result
    assert secret not in (result.tests[0].message or "")


def test_every_run_starts_from_the_same_random_state(cfg) -> None:
    """How far one run's tests got (which decides how many random numbers they drew) must not
    change the random inputs of the next run's tests."""
    draw = ["import random\nv = random.random()\nassert candidate(v) is None, repr(v)"]
    first = run_tests(HONEST, draw, "f", cfg).tests[0].message
    loop = ["import random\nfor _ in range(50):\n    assert candidate(random.random()) < 2"]
    run_tests("def f(x):\n    return 5\n", loop, "f", cfg)   # stops after one draw
    run_tests("def f(x):\n    return 0\n", loop, "f", cfg)   # draws 50
    assert run_tests(HONEST, draw, "f", cfg).tests[0].message == first


@pytest.mark.skipif(os.geteuid() != 0, reason="the warm interpreter is not dumpable: only root "
                    "may list its /proc/PID/fd")
def test_no_descriptor_left_in_the_judge_or_the_forking_side(cfg) -> None:
    _honest_run_is_unaffected(cfg)
    interpreters = _warm_interpreters()
    before = _settled_descriptors(interpreters)
    for name in ("forged_setup_and_answers", "answer_out_of_order", "channel_closed",
                 "half_a_frame_then_exit"):
        run_tests(PROTOCOL_ATTACKS[name], TESTS, "f", cfg)
    for name in ("os_exit", "sigkill_itself", "daemon_keeps_the_channel"):
        run_tests(SIGNAL_ATTACKS[name], TESTS, "f", cfg)
    _honest_run_is_unaffected(cfg)
    assert _warm_interpreters() == interpreters
    after = _settled_descriptors(interpreters)
    # Only processes alive at both reads are compared: a run that is still being reaped when the
    # first read is taken is not one of the long-lived processes whose leaks this test looks for.
    lasting = before.keys() & after.keys()
    assert interpreters <= lasting
    assert {pid: after[pid] for pid in lasting} == {pid: before[pid] for pid in lasting}


def _settled_descriptors(roots: set[int], wait_s: float = 2.0) -> dict[int, int]:
    """_descriptors once the warm interpreters are idle: each forking side has forked and named its
    next run's child (right after a reply it is still doing so, opening and closing that child's
    descriptors), and two reads agree."""
    from .sandbox_watch import next_runs_forked
    deadline = time.monotonic() + wait_s
    while True:
        counts = _descriptors(roots)
        time.sleep(0.02)
        if (next_runs_forked() and _descriptors(roots) == counts) or time.monotonic() > deadline:
            return counts


def _descriptors(roots: set[int]) -> dict[int, int]:
    """Open descriptors of each process under the warm interpreters (judge, forking side, the
    child waiting for the next request), read between requests."""
    from .sandbox_watch import _children, _descendants
    tree = _children()
    counts = {}
    for root in roots:
        for pid in [root, *_descendants(root, tree)]:
            try:
                counts[pid] = len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:
                pass
    return counts


# Each call needs 1.8 s, more than the test's 1 s (and the judge's 0.5 s grace). With the calls
# sent ahead the program reads every argument from the batch, starts all the work at once in
# threads (its alarm ignored), and answers each later call as soon as the previous answer is in.
PIPELINED = r'''
import signal, sys, threading, time
results, started = {}, []
def work(x):
    time.sleep(1.8)
    results[x] = x + 1
def f(x):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    if not started:
        started.append(x)
        frame = sys._getframe()
        while frame is not None and "batch" not in frame.f_locals.get("message", {}):
            frame = frame.f_back
        batch = frame.f_locals["message"]["batch"] if frame is not None else [[None, [x], {}]]
        for _, args, _ in batch:
            threading.Thread(target=work, args=(args[0],), daemon=True).start()
    waited = time.monotonic()
    while x not in results and time.monotonic() - waited < 0.6:
        time.sleep(0.01)
    return results.get(x, -1)
'''


@pytest.mark.xfail(strict=True, reason=(
    "calls sent ahead tell the program every argument at once: with its alarm ignored it works "
    "on all calls in parallel, and each answer only has to come within test_timeout_s + 0.5 s "
    "of the previous one, so calls that each take longer than test_timeout_s pass (called one "
    "by one, none does). Inherent in sending calls ahead; bounded by the run's timeout_s and "
    "the worker's CPU share"))
def test_calls_sent_ahead_give_no_call_more_than_its_test_time(cfg) -> None:
    cfg = dataclasses.replace(cfg, timeout_s=8.0, test_timeout_s=1.0)
    one_by_one = run_tests(PIPELINED, [f"a = {i}\nassert candidate(a) == {i + 1}" for i in range(2)],
                           "f", cfg)
    assert one_by_one.passed == 0
    ahead = run_tests(PIPELINED, [f"assert candidate({i}) == {i + 1}" for i in range(5)], "f", cfg)
    assert ahead.passed == 0, ahead


def _colliding_ints(n: int) -> str:
    """n distinct ints with one hash (multiples of 2**61 - 1): a set of them costs O(n**2)."""
    return f"[k * ((1 << 61) - 1) for k in range({n})]"


@pytest.mark.xfail(strict=False, reason=(  # not strict: the decode deadline may time the answer out first
    "a return value whose items all share one hash (ints k * (2**61 - 1)) makes the judge's "
    "set() in the test quadratic, in C, where no alarm can stop it: the judge hangs until the "
    "host gives up (timeout_s + HOST_GRACE_S) and kills the warm interpreter"))
def test_a_hash_colliding_return_value_does_not_hang_the_judge(cfg, monkeypatch) -> None:
    monkeypatch.setattr(api, "HOST_GRACE_S", 1.0)  # the host gives up sooner: a fast test
    cfg = dataclasses.replace(cfg, timeout_s=1.0)
    _honest_run_is_unaffected(cfg)
    interpreters = _warm_interpreters()
    program = f"def f(x):\n    return {_colliding_ints(400_000)}\n"
    result = run_tests(program, ["assert set(candidate(1)) == {1}"], "f", cfg)
    assert result.passed == 0
    _honest_run_is_unaffected(cfg)
    assert _warm_interpreters() == interpreters, "the judge hung past the run's timeout"


def test_a_forged_hash_colliding_set_is_refused_before_it_is_built(cfg) -> None:
    """Decoding the frame would build the set: quadratic, in C, past every deadline."""
    program = FRAME + f"""
def f(x):
    items = ",".join(str(n) for n in {_colliding_ints(400_000)})
    body = ('["d", "i", 1, "value", ["s", ' + items + ']]').encode()
    os.write(3, struct.pack("!I", len(body)) + body)
    time.sleep(60)
"""
    result = _attack(program, cfg)
    assert result.status == "crashed" and result.error_type == "ReportTampered", result
    assert "same hash" in result.error_message


def test_a_returned_hash_colliding_set_fails_its_test(cfg) -> None:
    result = _attack(f"def f(x):\n    return set({_colliding_ints(3000)})\n", cfg)
    assert result.status == "ok" and result.passed == 0, result
    assert result.tests[0].error_type == "NotPlainResult" and "same hash" in result.tests[0].message


# Replaces the child's runner of tests that fall back to running in the run: any test moved
# there passes. Then returns a value the judge can read but (one level deeper, as an argument)
# could not send back under the caps.
FORCE_FALLBACK = """
import sys
sys.modules["_runner"]._run_fallback = lambda message, namespace: {"status": "passed"}
def f(x):
    if x == 1:
        value = 0
        for _ in range(63):
            value = [value]
        return value
    return 0
"""


def test_a_returned_value_passed_back_never_moves_its_test_into_the_run(cfg) -> None:
    """MBPP has tests of this shape (`candidate(candidate(...))`, MBPP/56, 79, 104)."""
    result = run_tests(FORCE_FALLBACK, ["assert candidate(candidate(1)) == 12345"], "f", cfg)
    assert result.status == "ok" and result.passed == 0, result
    assert not result.tests[0].fallback


def test_a_forged_answer_over_the_item_cap_still_goes_back_as_a_call(cfg) -> None:
    program = FRAME + """
runner = sys.modules["_runner"]
runner._run_fallback = lambda message, namespace: {"status": "passed"}
send = runner._send
def drop_once(message):
    runner._send = send
def f(x):
    if x == 1:  # its own answer is forged (1,500,000 items, over the cap), the real one dropped
        body = b'["d", "i", 1, "value", ["l"' + b', 0' * 1_500_000 + b']]'
        os.write(3, struct.pack("!I", len(body)) + body)
        runner._send = drop_once
    return 0
"""
    result = run_tests(program, ["assert candidate(candidate(1)) == 12345"], "f", cfg)
    assert result.passed == 0 and not result.tests[0].fallback, result


def test_a_deep_value_passed_back_is_judged_outside_the_run(cfg) -> None:
    deep = "x = 0\nfor _ in range(63):\n    x = [x]\n"
    test = deep + "assert candidate(candidate(x)) == x"
    result = run_tests("def f(v):\n    return v\n", [test], "f", cfg)
    assert result.status == "ok" and result.passed == 1 and not result.tests[0].fallback, result


def test_a_run_cannot_predict_its_tests_random_draws(cfg) -> None:
    program = "import random\ndef f(x):\n    return random.random()\n"
    tests = ["import random\nassert candidate(0) == random.random()"]
    assert [run_tests(program, tests, "f", cfg).passed for _ in range(3)] == [0, 0, 0]


def test_a_forged_frame_over_the_item_cap_is_refused_before_it_is_built(cfg) -> None:
    """16 MiB of empty sets: built, a gigabyte of the judge's memory and seconds of its time."""
    program = FRAME + """
def f(x):
    body = b'["d","i",1,"value",["l"' + b',["s"]' * 2_700_000 + b']]'
    os.write(3, struct.pack("!I", len(body)) + body)
    time.sleep(60)
"""
    result = _attack(program, dataclasses.replace(cfg, timeout_s=10.0))
    assert result.status == "crashed" and "1,000,000 items" in result.error_message, result
