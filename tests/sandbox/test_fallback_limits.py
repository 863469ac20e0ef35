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

from .sandbox_watch import Listener

CFG = SandboxConfig(backend="subprocess", timeout_s=2.0, test_timeout_s=0.5, memory_mb=256,
                    max_processes=16, max_file_mb=4)


def test_auto_falls_back_with_one_warning(monkeypatch) -> None:
    monkeypatch.setattr(backends, "bwrap_works", lambda: False)
    monkeypatch.setattr(backends, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert backends.resolve("auto") == "subprocess"
        assert backends.resolve("auto") == "subprocess"
    messages = [str(w.message) for w in caught if issubclass(w.category, SandboxWarning)]
    assert len(messages) == 1
    assert "NO network isolation" in messages[0] and "NO read-only file system" in messages[0]


def test_explicit_bwrap_without_bubblewrap_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(backends, "bwrap_works", lambda: False)
    with pytest.raises(backends.SandboxUnavailable, match="bubblewrap"):
        backends.resolve("bwrap")


def test_limits_hold_without_bubblewrap() -> None:
    big = run_tests("with open('f', 'wb') as f:\n    f.write(b'x' * (5 << 20))", [], None, CFG)
    assert big.status == "crashed"  # SIGXFSZ: the file-size limit
    memory = run_tests("x = bytearray(300 << 20)", [], None, CFG)
    assert memory.status == "error" and memory.error_type == "MemoryError"
    env = run_tests("import os\nprint(sorted(os.environ))", [], None, CFG)
    assert env.stdout.strip() == "['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED', 'TMPDIR']"


def test_documented_weakness_network_is_reachable() -> None:
    server = Listener()
    try:
        program = f"import socket\nsocket.socket().connect(('127.0.0.1', {server.port}))"
        # socket is preloaded: under root, the run's uid may not read a private interpreter.
        config = dataclasses.replace(CFG, preload_modules=CFG.preload_modules + ("socket",))
        result = run_tests(program, [], None, config)
        assert result.status == "ok", result
        for _ in range(50):
            if server.connections:
                break
            time.sleep(0.02)
        assert server.connections == 1, "if this fails, update docs/sandbox.md: it got stronger"
    finally:
        server.close()


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
    assert result.status == "error" and result.error_type in ("PermissionError", "OSError")
    assert target.read_text() == "keep"
