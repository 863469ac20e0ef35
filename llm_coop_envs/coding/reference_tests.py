"""Expected values from the trusted reference: differential tests for rows that ship one.

A dataset's ``check(candidate)`` may compute an expected value by calling a function that the judge
takes from the program under test (HumanEval/33 compares ``candidate(x)`` with
``sort_third(x)``, the entry point by name, so the identity function passes). For rows that ship a
reference solution (HumanEval: ``prompt`` + ``canonical_solution``; ``coop_basics``:
``reference_helper`` + ``reference_main``), :func:`reference_test_source` rewrites the check so no
expected value comes from the program:

* ``assert <P> == <E>``, where ``<P>`` calls ``candidate`` (or another function of the program),
  becomes ``assert <P> == <literal>``: the literal is the ``repr`` of ``<P>`` evaluated with the
  reference as the program, used only when it reads back as the same plain builtin value;
* a tolerance, ``abs(<P> - <E>) < tol`` (``<=``, ``math.fabs``) or ``math.isclose(<P>, <E>, ...)``,
  keeps its tolerance and gets the reference's value as ``<E>``;
* every other test is a property check and stays as it is: truthiness (``assert candidate(x)``),
  ``is True``, loops over random inputs, checks through a prompt-defined inverse (find_zero's
  ``poly``, ``encode_cyclic``). None of them may read a name that the judge would take from the
  program, other than ``candidate``: a row where one does raises :class:`ReferenceTestError`.

The reference runs in one separate Python process per call (``-I``, a throwaway working directory,
an alarm per row and a wall-clock limit for the whole process), so a reference that hangs or
crashes cannot take the env process with it. Results are cached per process, keyed on the row's
text, and :func:`reference_test_sources` rewrites a whole dataset in one process (HumanEval's 164
rows in about 1.5 s on 2 cores, one second of it HumanEval/75's own brute-force reference).

Counts for the packaged data: of HumanEval's 1,133 scored statements, 1,087 ``==`` asserts get a
literal and 5 tolerances a reference value (HumanEval/2, /4); kept as property checks are 30
truthiness asserts (/52, /56, /61), 6 ``is True``/``is False`` (/72) and 5 loops (/32 through
``poly``, /38 through ``encode_cyclic``, /50 through ``encode_shift``, /44, /53 over random
inputs). Every coop_basics assert gets its literal. The reference passes every assert it rewrites
as the dataset wrote it.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from llm_coop_envs.coding.problems import prompt_context
from llm_coop_envs.coding.tests_split import SEED_LINE

ROW_TIMEOUT_S = 10.0
"""CPU seconds for one row's reference: load it and evaluate every rewritten assert."""
PROCESS_TIMEOUT_S = 300.0
"""Wall-clock limit for one reference process, whatever the number of rows."""
MAX_LITERAL_CHARS = 100_000
"""A longer ``repr`` stays out of the test source; the assert is kept as written."""
CACHE_SIZE = 8192

EXACT, TOLERANCE = "exact", "tolerance"
KEPT_TRUTH, KEPT_IDENTITY, KEPT_BLOCK, KEPT_OTHER, KEPT_NO_LITERAL = (
    "kept: truthiness", "kept: is", "kept: loop or block", "kept: other", "kept: no literal value")


class ReferenceTestError(ValueError):
    """A row's tests cannot be made independent of the program, or its reference does not run."""


@dataclasses.dataclass(frozen=True)
class ReferenceTests:
    """A row's rewritten check and, per scored statement of ``check``, how it was treated."""

    source: str
    kinds: tuple[str, ...]
    """One of EXACT, TOLERANCE or a ``kept: ...`` kind per statement of ``check`` that asserts."""
    disagreements: tuple[str, ...]
    """Rewritten asserts that the reference failed as written in the dataset (should be none)."""


def has_reference(row: Mapping[str, Any], dataset: str) -> bool:
    """Whether ``row`` ships a reference solution this module can run."""
    try:
        reference_program(row, dataset)
    except ReferenceTestError:
        return False
    return True


_REFERENCE_FIELDS = {"humaneval": ("canonical_solution",), "coop_basics": ("reference_helper", "reference_main")}


def reference_program(row: Mapping[str, Any], dataset: str) -> str:
    """The row's trusted reference as one program: the prompt, then the reference code. Other
    datasets than HumanEval and coop_basics may ship either form."""
    fields = _REFERENCE_FIELDS.get(dataset) or _REFERENCE_FIELDS[
        "humaneval" if "canonical_solution" in row else "coop_basics"]
    parts = [row.get("prompt"), *(row.get(f) for f in fields)]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        raise ReferenceTestError(f"{row.get('task_id')!r} ({dataset}) has no reference solution: needs {fields}.")
    if fields == _REFERENCE_FIELDS["humaneval"]:
        return parts[0] + parts[1]  # HumanEval's solution is the body that completes the prompt
    return "\n\n".join(parts)


def reference_test_source(row: Mapping[str, Any], dataset: str) -> str:
    """The row's ``check(candidate)`` source with every expected value computed from its reference."""
    return reference_tests([row], dataset)[0].source


def reference_test_sources(rows: Sequence[Mapping[str, Any]], dataset: str) -> list[str]:
    """:func:`reference_test_source` for many rows, with one reference process for all of them."""
    return [tests.source for tests in reference_tests(rows, dataset)]


def reference_tests(rows: Sequence[Mapping[str, Any]], dataset: str) -> list[ReferenceTests]:
    """The rewritten tests of ``rows`` (cached per process; the rows not cached share one process)."""
    keys = [_key(row, dataset) for row in rows]
    missing = list(dict.fromkeys(k for k in keys if _cache_get(k) is None))
    if missing:
        for key, tests in zip(missing, _rewrite_rows(missing)):
            _cache_put(key, tests)
    return [_cache_get(k) or _rewrite_rows([k])[0] for k in keys]


# --- cache -----------------------------------------------------------------------------------

_Key = tuple  # (task_id, program, test, entry_point, prompt)
_CACHE: dict[_Key, ReferenceTests] = {}
_CACHE_LOCK = threading.Lock()


def _key(row: Mapping[str, Any], dataset: str) -> _Key:
    for field in ("task_id", "test", "entry_point"):
        if not isinstance(row.get(field), str):
            raise ReferenceTestError(f"Row {row.get('task_id')!r} lacks the text field {field!r}.")
    return (row["task_id"], reference_program(row, dataset), row["test"], row["entry_point"], row["prompt"])


def _cache_get(key: _Key) -> ReferenceTests | None:
    with _CACHE_LOCK:
        return _CACHE.get(key)


def _cache_put(key: _Key, tests: ReferenceTests) -> None:
    with _CACHE_LOCK:
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))  # oldest first: a long run over user data stays bounded
        _CACHE[key] = tests


# --- planning: which asserts to rewrite and what to evaluate ---------------------------------

@dataclasses.dataclass
class _Slot:
    """A rewritable assert: where its expected side sits and what the reference must evaluate."""

    kind: str
    parent: ast.AST
    field: str
    index: int | None
    value: str
    """The side that calls the program, evaluated with the reference as the program."""
    position: int = 0
    """Which scored statement of ``check`` this is."""
    setup: list[ast.stmt] = dataclasses.field(default_factory=list)
    test: str = ""
    """The assert's condition as the dataset wrote it (to check that the reference passes it)."""


@dataclasses.dataclass
class _Plan:
    task_id: str
    module: ast.Module | None
    names: _Names | None
    kinds: list[str] = dataclasses.field(default_factory=list)
    slots: list[_Slot] = dataclasses.field(default_factory=list)


def _plan(key: _Key) -> _Plan:
    task_id, _, test, entry_point, prompt = key
    try:
        module = ast.parse(test)
    except (SyntaxError, ValueError) as error:
        raise ReferenceTestError(f"{task_id!r}: its test is not valid Python: {error}") from None
    check = _check_function(module)
    if check is None:
        return _Plan(task_id, None, None)
    plan = _Plan(task_id, module, _Names(check, _trusted_names(prompt, entry_point), entry_point))
    setup = [n for n in module.body if n is not check]
    for statement in check.body:
        if not any(isinstance(n, ast.Assert) for n in ast.walk(statement)):
            setup.append(statement)
        elif not (isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Constant)):
            _plan_statement(plan, statement, list(setup))
    return plan


def _check_function(module: ast.Module) -> ast.FunctionDef | None:
    return next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)


def _plan_statement(plan: _Plan, statement: ast.stmt, setup: list[ast.stmt]) -> None:
    slot = _slot(statement, plan.names) if isinstance(statement, ast.Assert) else None
    if slot is None:
        plan.names.require_no_program_names(statement, setup, plan.task_id)
        plan.kinds.append(_kept_kind(statement))
        return
    slot.position, slot.setup, slot.test = len(plan.kinds), setup, ast.unparse(statement.test)
    plan.slots.append(slot)
    plan.kinds.append(slot.kind)


def _slot(statement: ast.Assert, names: _Names) -> _Slot | None:
    test = statement.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        if isinstance(test.ops[0], ast.Eq):
            return _side_slot(EXACT, test, ("left", None, left), ("comparators", 0, right), names)
        if isinstance(test.ops[0], (ast.Lt, ast.LtE)) and _is_abs_of_difference(left):
            diff = left.args[0]
            return _side_slot(TOLERANCE, diff, ("left", None, diff.left), ("right", None, diff.right), names)
    if _is_isclose(test) and len(test.args) >= 2:
        return _side_slot(TOLERANCE, test, ("args", 0, test.args[0]), ("args", 1, test.args[1]), names)
    return None


def _side_slot(kind: str, parent: ast.AST, first: tuple, second: tuple, names: _Names) -> _Slot | None:
    # The side that calls the program is evaluated with the reference; the other side is replaced.
    for program, expected in ((first, second), (second, first)):
        if names.uses_program(program[2]):
            return _Slot(kind, parent, expected[0], expected[1], ast.unparse(program[2]))
    return None


def _is_abs_of_difference(node: ast.AST) -> bool:
    is_abs = isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and (
        _dotted(node.func) in ("abs", "math.fabs"))
    return is_abs and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Sub)


def _is_isclose(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func) in ("math.isclose", "cmath.isclose")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _kept_kind(statement: ast.stmt) -> str:
    if not isinstance(statement, ast.Assert):
        return KEPT_BLOCK
    test = statement.test
    if isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops):
        return KEPT_IDENTITY
    if isinstance(test, ast.Call) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return KEPT_TRUTH
    return KEPT_OTHER


class _Names:
    """Which names of a test the judge takes from the program: those the test reads but neither
    binds, nor finds among the builtins, the prompt's own definitions or the standard library."""

    def __init__(self, check: ast.FunctionDef, trusted: frozenset[str], entry_point: str) -> None:
        self.candidate = {a.arg for a in check.args.args} | {"candidate"}
        self.trusted = trusted - {entry_point}
        self.entry_point = entry_point

    def uses_program(self, node: ast.AST) -> bool:
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        return bool(read & (self.candidate | {self.entry_point}))

    def from_program(self, node: ast.AST, setup: list[ast.stmt]) -> set[str]:
        """Names other than ``candidate`` that ``node`` would read from the program."""
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return read - _bound_names([*setup, node]) - self.candidate - self.trusted - _NOT_FROM_PROGRAM

    def require_no_program_names(self, statement: ast.AST, setup: list[ast.stmt], task_id: str) -> None:
        taken = self.from_program(statement, setup)
        if taken:
            raise ReferenceTestError(
                f"{task_id!r}: the test {ast.unparse(statement)[:200]!r} reads {sorted(taken)} from the "
                "program where the reference cannot compute the value instead.")


_NOT_FROM_PROGRAM = frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names)


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    bound: set[str] = set()
    for node in (n for top in nodes for n in ast.walk(top)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _trusted_names(prompt: str, entry_point: str) -> frozenset[str]:
    # The judge runs the prompt's imports and helper functions as trusted context.
    try:
        return frozenset(_bound_names(ast.parse(prompt_context(prompt, entry_point)).body))
    except (SyntaxError, ValueError):
        return frozenset()


# --- rewriting ---------------------------------------------------------------------------------

def _rewrite_rows(keys: list[_Key]) -> list[ReferenceTests]:
    plans = [_plan(key) for key in keys]
    jobs = [_job(key, plan) for key, plan in zip(keys, plans)]
    answers = iter(_evaluate([job for job in jobs if job["probes"]]))
    return [_apply(key, plan, next(answers) if job["probes"] else None) for key, plan, job in zip(keys, plans, jobs)]


def _job(key: _Key, plan: _Plan) -> dict:
    probes = [{"setup": "\n".join(ast.unparse(s) for s in slot.setup), "value": slot.value, "test": slot.test}
              for slot in plan.slots]
    names = sorted(plan.names.candidate) if plan.names else ["candidate"]
    return {"program": key[1], "entry_point": key[3], "candidate_names": names, "probes": probes}


def _apply(key: _Key, plan: _Plan, answer: dict | None) -> ReferenceTests:
    task_id, test = key[0], key[2]
    if answer is None:
        return ReferenceTests(test, tuple(plan.kinds), ())
    if answer["error"]:
        raise ReferenceTestError(f"{task_id!r}: its reference solution failed: {answer['error']}")
    disagreements = []
    for slot, probe in zip(plan.slots, answer["probes"]):
        if probe["literal"] is None:
            _keep(slot, plan)
        else:
            _replace(slot, ast.parse(probe["literal"], mode="eval").body)
            if not probe["agrees"]:
                disagreements.append(slot.test)
    return ReferenceTests(ast.unparse(plan.module) + "\n", tuple(plan.kinds), tuple(disagreements))


def _keep(slot: _Slot, plan: _Plan) -> None:
    # No exact value to write down: the assert stays as written, unless its expected side would
    # then call the program.
    expected = getattr(slot.parent, slot.field)
    expected = expected if slot.index is None else expected[slot.index]
    if plan.names.uses_program(expected):
        raise ReferenceTestError(f"{plan.task_id!r}: the reference has no literal value for {slot.test!r}, "
                                 "whose expected side calls the program.")
    plan.names.require_no_program_names(expected, slot.setup, plan.task_id)
    plan.kinds[slot.position] = KEPT_NO_LITERAL


def _replace(slot: _Slot, literal: ast.expr) -> None:
    if slot.index is None:
        setattr(slot.parent, slot.field, literal)
    else:
        getattr(slot.parent, slot.field)[slot.index] = literal


# --- the reference process ---------------------------------------------------------------------

def _evaluate(jobs: list[dict]) -> list[dict]:
    """Per job, {"error": str | None, "probes": [{"literal": repr | None, "agrees": bool}]}, from
    one separate Python process."""
    if not jobs:
        return []
    request = json.dumps({"seed": SEED_LINE, "row_timeout": ROW_TIMEOUT_S, "max_chars": MAX_LITERAL_CHARS,
                          "jobs": jobs})
    timeout = min(PROCESS_TIMEOUT_S, 5.0 + ROW_TIMEOUT_S * len(jobs))
    with tempfile.TemporaryDirectory(prefix="coop-reference-") as scratch:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=request, capture_output=True,
                                  text=True, cwd=scratch, timeout=timeout, env=_child_environment())
        except subprocess.TimeoutExpired:
            raise ReferenceTestError(f"The reference process ran past {timeout:.0f} s.") from None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines:
        raise ReferenceTestError(f"The reference process failed ({done.returncode}): {done.stderr[-2000:]}")
    answers = json.loads(lines[-1])
    if len(answers) != len(jobs):
        raise ReferenceTestError("The reference process answered the wrong number of rows.")
    return answers


def _child_environment() -> dict[str, str]:
    # Nothing of the caller's environment but what an interpreter may need to start.
    kept = {k: os.environ[k] for k in ("PATH", "LD_LIBRARY_PATH", "SYSTEMROOT") if k in os.environ}
    return {**kept, "PYTHONHASHSEED": "0"}


# Runs in the reference process: standard library only (it starts with -I, outside the package).
_CHILD = r'''
import ast, io, json, math, signal, sys


class RowTimeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise RowTimeout()


def plain(value, depth=0):
    if depth > 64:
        return False
    if value is None or type(value) in (bool, int, str, bytes):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is complex:
        return math.isfinite(value.real) and math.isfinite(value.imag)
    if type(value) in (list, tuple, set):
        return all(plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
    return False


def shape(value):
    # Types all the way down, so that 1 never stands for True nor 1.0 for 1.
    if type(value) in (list, tuple):
        return (type(value).__name__, tuple(shape(v) for v in value))
    if type(value) is set:
        return ("set", frozenset(shape(v) for v in value))
    if type(value) is dict:
        return ("dict", tuple((shape(k), shape(v)) for k, v in value.items()))
    return type(value).__name__


def literal(value, max_chars):
    if not plain(value):
        return None
    text = repr(value)
    if len(text) > max_chars:
        return None
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return text if back == value and shape(back) == shape(value) else None


def probe(namespace, names, seed, item, max_chars):
    scope = dict(namespace)
    for name in names:
        scope[name] = namespace["__coop_entry__"]
    exec(seed + item["setup"], scope)
    value = eval(item["value"], scope)
    try:
        agrees = bool(eval(item["test"], scope))
    except Exception:
        agrees = False
    return {"literal": literal(value, max_chars), "agrees": agrees}


def run_row(job, seed, max_chars):
    namespace = {"__name__": "__coop_reference__"}
    exec(job["program"], namespace)
    namespace["__coop_entry__"] = namespace[job["entry_point"]]
    probes = []
    for item in job["probes"]:
        try:
            probes.append(probe(namespace, job["candidate_names"], seed, item, max_chars))
        except Exception:
            probes.append({"literal": None, "agrees": False})
    return {"error": None, "probes": probes}


def main():
    request = json.loads(sys.stdin.read())
    out, sys.stdout = sys.stdout, io.StringIO()  # what a reference prints must not reach the answer
    # CPU time, not wall time: on a busy machine a slow trusted reference (HumanEval/75 brute-forces
    # for a second) must not time out; a reference that sleeps forever meets the process's wall limit.
    signal.signal(signal.SIGPROF, on_alarm)
    answers = []
    for job in request["jobs"]:
        signal.setitimer(signal.ITIMER_PROF, request["row_timeout"])
        try:
            answers.append(run_row(job, request["seed"], request["max_chars"]))
        except RowTimeout:
            answers.append({"error": "timed out", "probes": []})
        except BaseException as error:
            answers.append({"error": f"{type(error).__name__}: {error}"[:2000], "probes": []})
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        sys.stdout = io.StringIO()
    out.write("\n" + json.dumps(answers) + "\n")
    out.flush()


main()
'''
