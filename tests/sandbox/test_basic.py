"""run_tests semantics on ordinary programs."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

from llm_coop_envs.sandbox import ExecutionResult, run_tests

from .paths import private_ancestor

ADD = "def add(a, b):\n    return a + b\n"


def test_passing_and_failing_tests_are_reported_each(cfg) -> None:
    result = run_tests(ADD, ["assert candidate(1, 2) == 3", "assert candidate(1, 1) == 3",
                             "1 / 0"], "add", cfg)
    assert result.status == "ok"
    assert [t.status for t in result.tests] == ["passed", "failed", "error"]
    assert result.tests[2].error_type == "ZeroDivisionError"
    assert (result.passed, result.total) == (1, 3)
    assert abs(result.pass_fraction - 1 / 3) < 1e-9


def test_syntax_error_has_line_and_column(cfg) -> None:
    result = run_tests("x = 1\ndef f(:\n", ["assert True"], None, cfg)
    assert result.status == "syntax_error"
    assert result.error_type == "SyntaxError"
    assert (result.error_line, result.error_col) == (2, 7)
    assert [t.status for t in result.tests] == ["not_run"]


def test_error_while_loading(cfg) -> None:
    result = run_tests("import no_such_module_xyz", ["assert True"], None, cfg)
    assert result.status == "error"
    assert result.error_type == "ModuleNotFoundError"


def test_missing_entry_point(cfg) -> None:
    result = run_tests(ADD, ["assert candidate(1, 2) == 3"], "sub", cfg)
    assert result.status == "error" and result.error_type == "NameError"
    assert result.passed == 0


def test_output_is_captured(cfg) -> None:
    result = run_tests("import sys\nprint('out')\nprint('err', file=sys.stderr)", [], None, cfg)
    assert result.status == "ok"
    assert result.stdout == "out\n" and result.stderr == "err\n"


def test_tests_see_program_definitions_without_entry_point(cfg) -> None:
    result = run_tests(ADD + "K = 5\n", ["assert add(K, 1) == 6"], None, cfg)
    assert result.passed == 1


def test_per_test_timeout_lets_later_tests_run(cfg) -> None:
    result = run_tests("x = 1", ["while True: pass", "assert x == 1"], None, cfg)
    assert result.status == "ok"
    assert [t.status for t in result.tests] == ["timeout", "passed"]


def test_result_is_a_frozen_dataclass(cfg) -> None:
    result = run_tests(ADD, [], "add", cfg)
    assert isinstance(result, ExecutionResult) and result.status == "ok"
    assert result.pass_fraction == 0.0



def _mount_namespaces_allowed() -> bool:
    """Whether a process may unshare its mount namespace here (probed in a throwaway fork)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(0x00020000) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def test_standard_library_imports_but_site_packages_do_not(cfg) -> None:
    if (cfg.backend == "unconfined" and os.geteuid() == 0 and private_ancestor(sys.base_prefix)
            and not _mount_namespaces_allowed()):
        pytest.skip("documented: under root without mount namespaces, the fallback's run uid "
                    "cannot read a private interpreter")
    result = run_tests("import socket, sqlite3, email.mime.text\n", [], None, cfg)
    assert result.status == "ok", result
    result = run_tests("import pytest\n", [], None, cfg)
    assert result.error_type == "ModuleNotFoundError", result


def test_private_home_is_hidden_but_interpreter_visible(cfg) -> None:
    private = private_ancestor(sys.base_prefix)
    if cfg.backend == "unconfined" or private is None:
        pytest.skip("a file view (bwrap, subprocess) with an interpreter below a private folder only")
    others = sorted(set(os.listdir(private)) - {sys.base_prefix[len(private) + 1:].split("/")[0]})
    if not others:
        pytest.skip(f"nothing else in {private} to hide")
    result = run_tests(f"import os\nprint(os.path.exists({os.path.join(private, others[0])!r}))",
                       [], None, cfg)
    assert result.stdout == "False\n"
