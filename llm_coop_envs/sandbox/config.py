"""SandboxConfig: which backend runs untrusted code and the limits it runs under."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BACKENDS = ("auto", "bwrap", "subprocess", "unconfined")

# Modules the warm interpreter imports once so that a program's `import math` costs a dict
# lookup instead of a file-system search in every forked child.
DEFAULT_PRELOAD = (
    "math", "re", "string", "collections", "itertools", "functools", "heapq", "bisect",
    "typing", "random", "statistics", "fractions", "decimal", "json", "hashlib", "copy",
    "operator", "datetime",
)


@dataclass(frozen=True)
class SandboxConfig:
    """Limits for one execution of an untrusted program and its tests.

    Every limit applies per program run (the forked child and everything it starts).
    """

    backend: str = "auto"
    """"auto" picks "bwrap" when bubblewrap works here, else "subprocess" (weaker, warns once) when
    its runs can get a file view of their own (mount namespaces: root, or an ordinary user's own user namespace), else refuses to run
    (SandboxUnavailable). "unconfined": the subprocess backend, where no file view can be made
    too (the program reads the host's files): the opt-in by name, also for "auto" through the
    LLM_COOP_SANDBOX_BACKEND variable. See docs/sandbox.md."""
    timeout_s: float = 10.0
    """Wall clock for the whole run (program setup + all tests); everything started is killed after."""
    test_timeout_s: float = 3.0
    """Wall clock for one test snippet; the snippet gets status "timeout"."""
    memory_mb: int = 1024
    """Address-space limit (RLIMIT_AS) of every process of the run."""
    cpu_s: int | None = None
    """CPU seconds per process (RLIMIT_CPU); None means ceil(timeout_s) + 1."""
    max_processes: int = 32
    """Processes/threads the run may create (RLIMIT_NPROC, enforced under a dedicated uid)."""
    max_file_mb: int = 16
    """Largest file the run may write (RLIMIT_FSIZE); also the size of the scratch file system."""
    max_open_files: int = 64
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    max_output_bytes: int = 65536
    """stdout and stderr are each truncated to this many bytes."""
    max_program_bytes: int = 4_000_000
    """Longer programs (UTF-8 bytes, tests included) are rejected without running."""
    isolate_tests: bool = False
    """Each test in a child of its own: forked before any of the program's code has run, it runs
    the program afresh, with an emptied scratch folder, so nothing one test's run did (a global, a
    file, a replaced builtin, a process it started) reaches another, and their order cannot
    matter. Costs a fork and a run of the program per test (docs/sandbox.md)."""
    stop_at_failure: bool = False
    """Stop at the first test that does not pass: the tests after it are "not_run". For runs that
    only ask whether every test passes (the counterfactual runs of the coding envs)."""
    preload_modules: tuple[str, ...] = field(default=DEFAULT_PRELOAD)
    """Imported once in the warm interpreter; a program's import of them is then free. A module outside
    the standard library named here is the allow-list of site-packages a run may import."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend={self.backend!r}: use one of {BACKENDS}")
        for name in ("timeout_s", "test_timeout_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r}: use a finite number of seconds > 0")
        for name in ("memory_mb", "max_processes", "max_file_mb", "max_open_files",
                     "max_output_bytes", "max_program_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name}={value!r}: use a positive int")
        if self.memory_mb < 64:
            raise ValueError(f"memory_mb={self.memory_mb}: an interpreter needs at least 64")
        if self.max_open_files < 16:
            raise ValueError(f"max_open_files={self.max_open_files}: the harness needs at least 16")
        if self.cpu_s is not None and (not isinstance(self.cpu_s, int) or self.cpu_s <= 0):
            raise ValueError(f"cpu_s={self.cpu_s!r}: use a positive int or None (derived from timeout_s)")
        for name in ("isolate_tests", "stop_at_failure"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r}: use True or False")
        if not all(isinstance(m, str) and m.isidentifier() for m in self.preload_modules):
            raise ValueError("preload_modules: use a tuple of top-level module names")

    @property
    def effective_cpu_s(self) -> int:
        return self.cpu_s if self.cpu_s is not None else math.ceil(self.timeout_s) + 1

    def limits(self) -> dict[str, float | int]:
        """The per-run part of the config, as sent to the warm interpreter."""
        return {
            "timeout_s": float(self.timeout_s), "test_timeout_s": float(self.test_timeout_s),
            "memory_mb": self.memory_mb, "cpu_s": self.effective_cpu_s,
            "max_processes": self.max_processes, "max_file_mb": self.max_file_mb,
            "max_open_files": self.max_open_files, "max_output_bytes": self.max_output_bytes,
            "isolate_tests": self.isolate_tests, "stop_at_failure": self.stop_at_failure,
        }
