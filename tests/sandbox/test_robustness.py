"""run_tests never raises, never hangs, never leaks; batches keep order; threads are safe."""

from __future__ import annotations

import dataclasses
import glob
import os
import threading

import pytest

from llm_coop_envs.sandbox import SandboxConfig, run_tests, run_tests_batch

from .conftest import SUBPROCESS, skip_where_runs_share_the_callers_uid
from .sandbox_watch import run_processes

JUNK = {
    "nul_bytes": "x = 1\x00\x00",
    "lone_surrogate": "s = '\ud800'\n\udfff",
    "binary": bytes(range(256)).decode("latin-1") * 4,
    "empty": "",
    "deep_nesting": "x = " + "(" * 5000 + ")" * 5000,
    "huge_but_allowed": "x = 1\n" * 200_000,
}


@pytest.mark.parametrize("name", sorted(JUNK))
def test_junk_programs_give_a_result(name, cfg) -> None:
    result = run_tests(JUNK[name], ["assert candidate() == 1"], "f", cfg)
    assert result.status in ("syntax_error", "error", "ok")
    assert result.passed == 0


def test_too_large_program_is_rejected_without_running(cfg) -> None:
    result = run_tests("x = 1\n" * 1_000_000, ["assert True"], None, cfg)
    assert result.status == "error" and result.error_type == "ProgramTooLarge"


def test_non_string_inputs_are_reported_not_raised(cfg) -> None:
    assert run_tests(b"x = 1", ["assert True"], None, cfg).error_type == "TypeError"  # type: ignore[arg-type]
    assert run_tests("x = 1", [None], None, cfg).error_type == "TypeError"  # type: ignore[list-item]


def test_surrogates_travel_as_escapes(cfg) -> None:
    result = run_tests("def f():\n    return '\\ud800'", ["assert candidate() == '\\ud800'"], "f", cfg)
    assert result.status == "ok" and result.passed == 1, result
    literal = run_tests("def f():\n    return '\ud800'", ["assert True"], "f", cfg)
    assert literal.status == "syntax_error" and literal.error_type == "UnicodeEncodeError"


def test_batch_keeps_order(cfg) -> None:
    jobs = [(f"def f():\n    return {i}", [f"assert candidate() == {i}", "assert candidate() == -1"], "f")
            for i in range(20)]
    results = run_tests_batch(jobs, cfg, workers=2)
    assert [r.tests[0].status for r in results] == ["passed"] * 20
    assert [r.tests[1].status for r in results] == ["failed"] * 20
    assert run_tests_batch([], cfg) == []


def test_many_threads_at_once(cfg) -> None:
    results: dict[int, int] = {}

    def call(i: int) -> None:
        result = run_tests(f"def f():\n    return {i}", [f"assert candidate() == {i}"], "f", cfg)
        results[i] = result.passed

    threads = [threading.Thread(target=call, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: 1 for i in range(12)}


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_no_fd_or_process_leak(cfg) -> None:
    cfg = dataclasses.replace(cfg, timeout_s=0.3)
    run_tests("x = 1", ["assert x == 1"], None, cfg)  # warm up the pool
    before = _open_fds()
    for i in range(30):
        run_tests("import os\nos.open('f', os.O_CREAT | os.O_WRONLY)\nwhile True: pass"
                  if i % 10 == 0 else "x = 1", ["assert x == 1"], None, cfg)
    assert _open_fds() == before
    assert run_processes() == []


def test_subprocess_scratch_is_removed_on_shutdown() -> None:
    from llm_coop_envs.sandbox import shutdown
    cfg = SandboxConfig(backend=SUBPROCESS, timeout_s=2.0)
    run_tests("open('left-behind', 'w').write('x')", [], None, cfg)
    assert glob.glob("/tmp/llm-coop-sandbox-*")
    shutdown()
    mine = [d for d in glob.glob("/tmp/llm-coop-sandbox-*") if os.stat(d).st_uid == os.getuid()]
    assert not any(os.path.exists(os.path.join(d, "run-1", "left-behind")) for d in mine)


@pytest.mark.parametrize("kwargs", [
    {"backend": "docker"}, {"timeout_s": 0}, {"timeout_s": float("nan")}, {"memory_mb": 10},
    {"max_processes": 0}, {"cpu_s": -1}, {"max_open_files": 3}, {"preload_modules": ("os.path",)},
])
def test_config_validation(kwargs) -> None:
    with pytest.raises(ValueError):
        SandboxConfig(**kwargs)


def test_batch_queues_small_and_large_jobs_in_order(cfg) -> None:
    """Jobs queue behind each other on a warm interpreter; one bigger than the pipe waits for
    the queue to drain instead of blocking; results keep the order of the jobs."""
    padding = "# " + "x" * 200_000 + "\n"
    jobs = [((padding if i % 7 == 3 else "") + f"def f():\n    return {i}",
             [f"assert candidate() == {i}"], "f") for i in range(30)]
    results = run_tests_batch(jobs, cfg, workers=2)
    assert [(r.status, r.passed) for r in results] == [("ok", 1)] * 30


def test_batch_with_hostile_jobs_between_good_ones(cfg) -> None:
    """A run that times out or crashes does not disturb the request queued behind it."""
    skip_where_runs_share_the_callers_uid(cfg.backend, "kill(-1)")
    fast = dataclasses.replace(cfg, timeout_s=0.5)
    bad = ["while True:\n    pass", "import os\nos._exit(0)", "import os, signal\nos.kill(-1, signal.SIGKILL)"]
    jobs = []
    for i in range(12):
        program = bad[i % 3] if i % 2 else f"def f():\n    return {i}"
        jobs.append((program, [f"assert candidate() == {i}"], "f"))
    results = run_tests_batch(jobs, fast, workers=2)
    assert [r.passed for r in results[::2]] == [1] * 6
    assert all(r.passed == 0 and r.status in ("timeout", "crashed", "error") for r in results[1::2])
    assert run_processes() == []


def _my_warm_interpreters(backend: str) -> list[int]:
    """Sandboxes this process started for `backend` (its direct children)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if int(stat[stat.rindex(b")") + 2:].split()[1]) != os.getpid():
            continue
        is_bwrap = os.path.basename(argv[0]) == b"bwrap"
        if (backend == "bwrap") == is_bwrap and any(a.endswith(b"_zygote.py") for a in argv):
            found.append(int(name))
    return found


def test_batch_survives_a_warm_interpreter_killed_mid_batch(cfg, backend) -> None:
    """Killing a warm interpreter from outside: the job it ran is reported 'crashed', the job
    queued behind it runs on a fresh one, and the batch returns every result."""
    import signal
    import time

    jobs = [("import time\ntime.sleep(0.1)\ndef f():\n    return 1", ["assert candidate() == 1"], "f")
            for _ in range(16)]
    killed: list[int] = []

    def kill_one_worker() -> None:
        time.sleep(0.3)
        victims = _my_warm_interpreters(backend)
        if victims:
            os.killpg(victims[0], signal.SIGKILL)
            killed.append(victims[0])

    run_tests_batch(jobs[:2], cfg, workers=2)  # both warm interpreters started
    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    results = run_tests_batch(jobs, cfg, workers=2)
    killer.join()
    assert killed
    crashed = [r for r in results if r.status == "crashed"]
    assert len(crashed) == 1 and crashed[0].error_type == "SandboxError", crashed
    assert sum(r.passed for r in results) == 15
    assert run_processes() == []
