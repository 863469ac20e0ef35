"""Small limits so that hostile programs are stopped quickly; every test runs on each backend."""

from __future__ import annotations

import os

import pytest

from llm_coop_envs.sandbox import SandboxConfig
from llm_coop_envs.sandbox.backend import bwrap_works, view_works

# The subprocess backend gives its runs a file view where mount namespaces work (root); elsewhere
# (an ordinary user) it is refused, and the suite runs its opt-in without a view, "unconfined".
SUBPROCESS = "subprocess" if view_works() else "unconfined"
BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="bubblewrap unusable")),
    SUBPROCESS,
]


def skip_where_runs_share_the_callers_uid(backend: str, why: str) -> None:
    """The opt-in without a file view, as an ordinary user, runs programs under the caller's own
    uid (documented, docs/sandbox.md): a program may signal any process of the caller (kill(-1)
    reaches pytest itself) and write where the caller may. Tests of such programs skip there."""
    if backend == "unconfined" and os.geteuid() != 0:
        pytest.skip(f"documented: 'unconfined' as an ordinary user shares the caller's uid ({why})")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def cfg(backend: str) -> SandboxConfig:
    return SandboxConfig(backend=backend, timeout_s=3.0, test_timeout_s=0.5, memory_mb=256,
                         max_processes=16, max_file_mb=4, max_output_bytes=4096)


@pytest.fixture
def hostile_cfg(backend: str) -> SandboxConfig:
    """Tighter wall clock: most hostile programs end by being killed."""
    return SandboxConfig(backend=backend, timeout_s=1.0, test_timeout_s=0.5, memory_mb=256,
                         max_processes=16, max_file_mb=4, max_output_bytes=4096)
