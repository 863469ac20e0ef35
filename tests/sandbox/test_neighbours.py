"""Namespaces between runs. The attacks of hostile_neighbours.py are real: both halves of each, inside one run, meet (so a
contained result in test_isolation.py is the sandbox's doing, not a broken attack), and each
result says which isolations held."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import uuid

import pytest

from llm_coop_envs.sandbox import api, run_tests
from llm_coop_envs.sandbox import backend as backends
from llm_coop_envs.sandbox.worker import Worker

from . import hostile, hostile_neighbours
from .sandbox_watch import _marked_now, marked_processes


@pytest.mark.parametrize("name", sorted(hostile_neighbours.BETWEEN_RUNS))
def test_the_attack_works_within_one_run(backend: str, name: str) -> None:
    assert hostile_neighbours.works_within_one_run(backend, name), name


def test_a_run_sees_its_own_name_in_proc(backend: str) -> None:
    """The control of name_left_for_the_next_run: the scan finds a name that is there."""
    program = ("import ctypes, glob\nctypes.CDLL(None).prctl(15, b'visible-to-me', 0, 0, 0)\n"
               "print(any(open(p).read().strip() == 'visible-to-me'\n"
               "          for p in glob.glob('/proc/[0-9]*/task/*/comm')))")
    assert run_tests(program, [], None, hostile_neighbours._config(backend)).stdout.strip() == "True"


def test_results_say_which_isolations_held(backend: str) -> None:
    held = hostile.isolation(backend)
    assert set(held) <= {"file_view", "network", "pid_namespace", "run_uid", "ipc"}
    if backend in ("bwrap", "subprocess"):
        assert "file_view" in held
    if backend == "bwrap":
        assert {"network", "pid_namespace"} <= set(held)


def test_a_daemon_dies_with_its_warm_interpreter(backend: str, cfg) -> None:
    """With a PID namespace, a daemon a run started (its own session, double-forked) dies when the
    warm interpreter is killed from outside, before the host's own clean-up (a kill by the run's
    uid) has run: the namespace's init is gone, so the kernel kills the rest."""
    if "pid_namespace" not in hostile.isolation(backend):
        pytest.skip(f"{backend} has no PID namespace here")
    marker = f"daemon-{uuid.uuid4().hex}"
    program = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
               f"        os.execv('/bin/sh', ['sh', '-c', 'while :; do sleep 0.05; done; : {marker}'])\n"
               "    os._exit(0)\ntime.sleep(30)\n")
    worker = Worker(backends.plan(backends.resolve(backend), cfg.preload_modules, cfg.max_file_mb))
    try:
        worker.handshake()
        worker.send(api.encode_request(program, [], None, dataclasses.replace(cfg, timeout_s=30.0)))
        deadline = time.monotonic() + 10
        while not _marked_now(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _marked_now(marker), "the daemon never started: the test proves nothing"
        os.kill(worker.proc.pid, signal.SIGKILL)  # the judge; the host does not clean up yet
        assert marked_processes(marker, wait_s=3.0) == []
    finally:
        worker.close()
