"""The subprocess backend's documented limits (docs/sandbox.md): what it contains, and the
weaknesses it admits, asserted so that the documentation stays true."""

from __future__ import annotations

import dataclasses
import os
import time
import uuid
import warnings

import pytest

from llm_coop_envs.sandbox import SandboxConfig, SandboxWarning, run_tests
from llm_coop_envs.sandbox import backend as backends

from .conftest import SUBPROCESS
from .sandbox_watch import Listener

CFG = SandboxConfig(backend=SUBPROCESS, timeout_s=2.0, test_timeout_s=0.5, memory_mb=256,
                    max_processes=16, max_file_mb=4)
HONEST = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(backends, "bwrap_works", lambda: False)
    monkeypatch.setattr(backends, "_warned", set())
    monkeypatch.delenv(backends.BACKEND_VARIABLE, raising=False)


@pytest.fixture
def no_view(no_bwrap, monkeypatch):
    """Neither bubblewrap nor mount namespaces: an ordinary user on a host without bubblewrap."""
    monkeypatch.setattr(backends, "view_works", lambda: False)


def _sandbox_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, SandboxWarning)]


def test_auto_falls_back_with_one_warning(no_bwrap, monkeypatch) -> None:
    monkeypatch.setattr(backends, "view_works", lambda: True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert backends.resolve("auto") == "subprocess"
        assert backends.resolve("auto") == "subprocess"
    messages = _sandbox_warnings(caught)
    assert len(messages) == 1
    assert "system folders and the interpreter only" in messages[0]
    assert "network and PID namespace" in messages[0] and "`isolation`" in messages[0]


def test_explicit_bwrap_without_bubblewrap_is_a_clear_error(no_bwrap) -> None:
    with pytest.raises(backends.SandboxUnavailable, match="bubblewrap"):
        backends.resolve("bwrap")


@pytest.mark.parametrize("name", ["auto", "subprocess"])
def test_without_a_file_view_untrusted_code_is_refused_unless_named(no_view, name) -> None:
    """Where runs could read the host's files, nothing runs until the user opts in by name, and
    the error (one line) says how."""
    with pytest.raises(backends.SandboxUnavailable) as raised:
        run_tests(HONEST, ["assert candidate(1, 2) == 3"], "add", dataclasses.replace(CFG, backend=name))
    message = str(raised.value)
    assert "\n" not in message and "backend='unconfined'" in message
    assert f"{backends.BACKEND_VARIABLE}=unconfined" in message and "answer keys" in message


def test_the_opt_in_by_name_runs_and_says_so_once(no_view, monkeypatch) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert backends.resolve("unconfined") == "unconfined"
        monkeypatch.setenv(backends.BACKEND_VARIABLE, "unconfined")
        assert backends.resolve("auto") == "unconfined"
    messages = _sandbox_warnings(caught)
    assert len(messages) == 1 and "NO file view" in messages[0]
    monkeypatch.setenv(backends.BACKEND_VARIABLE, "subprocess")
    with pytest.raises(backends.SandboxUnavailable):
        backends.resolve("auto")  # the variable names a backend; only "unconfined" opts in
    monkeypatch.setenv(backends.BACKEND_VARIABLE, "unconfinde")
    with pytest.raises(ValueError, match="LLM_COOP_SANDBOX_BACKEND"):
        backends.resolve("auto")


def test_results_record_the_backend_that_ran(no_view) -> None:
    """The opted-in backend without a file view runs (root: a fresh uid, no view; only preloaded
    modules where the interpreter is private) and its results say "unconfined"."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        result = run_tests(HONEST, ["assert candidate(1, 2) == 3"], "add",
                           dataclasses.replace(CFG, backend="unconfined"))
    assert result.backend == "unconfined" and result.pass_fraction == 1.0, result


def test_where_a_view_works_the_opt_in_still_gets_it() -> None:
    if not backends.view_works():
        pytest.skip("no mount namespaces here")
    assert backends.resolve("unconfined") == "subprocess"


def test_limits_hold_without_bubblewrap() -> None:
    big = run_tests("with open('f', 'wb') as f:\n    f.write(b'x' * (5 << 20))", [], None, CFG)
    assert big.status == "crashed"  # SIGXFSZ: the file-size limit
    memory = run_tests("x = bytearray(300 << 20)", [], None, CFG)
    assert memory.status == "error" and memory.error_type == "MemoryError"
    env = run_tests("import os\nprint(sorted(os.environ))", [], None, CFG)
    assert env.stdout.strip() == "['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED', 'TMPDIR']"


def test_the_host_network_is_out_of_reach_where_a_namespace_held() -> None:
    """With a network namespace (root: the subprocess backend) a run cannot reach the host's
    loopback; without one (`unconfined`) it can: a documented weakness (docs/sandbox.md)."""
    server = Listener()
    try:
        program = (f"import socket\ntry:\n    socket.socket().connect(('127.0.0.1', {server.port}))\n"
                   "    print('connected')\nexcept OSError:\n    print('refused')")
        # socket is preloaded: under root, the run's uid may not read a private interpreter.
        config = dataclasses.replace(CFG, preload_modules=CFG.preload_modules + ("socket",))
        result = run_tests(program, [], None, config)
        assert result.status == "ok", result
        isolated = "network" in result.isolation
        assert result.stdout.strip() == ("refused" if isolated else "connected"), result
        for _ in range(0 if isolated else 50):
            if server.connections:
                break
            time.sleep(0.02)
        assert server.connections == (0 if isolated else 1), "update docs/sandbox.md"
    finally:
        server.close()


def test_a_namespace_that_cannot_be_made_is_named_once(monkeypatch) -> None:
    """Where the kernel refuses a namespace, the results say what held and one SandboxWarning says
    what is missing and why; the run still happens (only the file view is required)."""
    from llm_coop_envs.sandbox.worker import Worker
    worker = Worker(backends.plan(SUBPROCESS, (), 4))
    try:
        monkeypatch.setattr(backends, "_warned", set())
        ready = {"ready": True, "isolation": {"held": ["file_view", "run_uid"],
                                              "missing": {"network": "unshare(CLONE_NEWNET): nope"}}}
        monkeypatch.setattr("llm_coop_envs.sandbox.inside._protocol.read_frame", lambda *a: ready)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            worker.handshake()
            worker.handshake()
        assert worker.isolation == ("file_view", "run_uid")
        messages = _sandbox_warnings(caught)
        assert len(messages) == 1 and "network (unshare(CLONE_NEWNET): nope)" in messages[0]
    finally:
        worker.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="without root, no mount namespace of the run's own")
def test_under_root_world_writable_dirs_are_read_only_for_a_run() -> None:
    path = f"/tmp/sandbox-escape-{uuid.uuid4().hex}"
    try:
        result = run_tests(f"open({path!r}, 'w').write('x')", [], None, CFG)
        assert result.error_type == "OSError" and "Read-only" in result.error_message
        assert not os.path.exists(path)
    finally:
        if os.path.exists(path):
            os.remove(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to a run uid")
def test_root_owned_files_are_protected_by_the_run_uid(tmp_path) -> None:
    target = tmp_path / "owned-by-root"
    target.write_text("keep")
    result = run_tests(f"open({str(target)!r}, 'w').write('gone')", [], None, CFG)
    # hidden by the file view (FileNotFoundError); without one, the run's uid may not write it
    assert result.status == "error" and result.error_type in ("PermissionError", "OSError",
                                                              "FileNotFoundError")
    assert target.read_text() == "keep"
