"""Repairs of dataset rows whose asserts the HumanEval-format conversion broke.

The MBPP file we read was converted to HumanEval's ``check(candidate)`` form by renaming the call
at the start of each assert to ``candidate``. Where that call was not the tested function, the
assert stopped testing it:

| task ids | what the file has | repaired to | why |
|---|---|---|---|
| MBPP/56, MBPP/79, MBPP/104 | ``assert candidate(candidate(A)) == candidate(B)`` (3 asserts each) | ``assert set(candidate(A)) == set(B)``, as in MBPP | ``set`` was renamed: the assert compared the program's output on its own output with its output on the answer, so every constant function passed (``return 0`` solved all three problems) and a correct solution failed |
| MBPP/29, 32, 45, 65, 76, 78, 87, 105, 115, 117, 141, 162, 172 | ``assert math.candidate(candidate(x), y, rel_tol=0.001)`` (3 asserts each, 39 in all) | ``assert math.isclose(candidate(x), y, rel_tol=0.001)``, as in MBPP, with ``import math`` at the top | ``isclose`` was renamed: ``math.candidate`` does not exist, so these asserts raised ``AttributeError`` for every program and no reply could solve the 13 problems |

Nothing else in MBPP (257 rows, 776 asserts) or CoopHumanEval (82 rows, 419 asserts) judges the
program by itself or fails for every program: every other assert compares one call of the
function on literal arguments with a literal (or a literal within a tolerance). MBPP/26 calls its
function by name (``is_Diff (12345)``) on the side under test, which the judge resolves to the
program's function, as it should. ``tests/coding/test_packaged_asserts.py`` checks this with
constant and identity functions.

A row is repaired only when both its ``task_id`` and the exact text of its ``test`` (by SHA-256)
are the ones listed here, so a user's own file is repaired only where it has exactly that defect;
every other row comes back as an unchanged copy.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any


def _restore_set(test: str) -> str:
    # `candidate(candidate(A)) == candidate(B)` was `set(f(A)) == set(B)`.
    test = test.replace("candidate(candidate(", "set(candidate(")
    return re.sub(r"(==\s*)candidate\(", r"\1set(", test)


def _restore_isclose(test: str) -> str:
    # The judge supplies standard-library modules a test names, but a plain exec of the check does not.
    return "import math\n\n" + test.replace("math.candidate(", "math.isclose(")


@dataclasses.dataclass(frozen=True)
class Repair:
    """One row's repair: which row (task id and the SHA-256 of its broken test text), how, and why."""

    task_id: str
    test_sha256: str
    fix: Callable[[str], str]
    why: str


_FIXES = {
    "set": (_restore_set, "`set` renamed to `candidate`: the asserts judged the program by itself"),
    "isclose": (_restore_isclose, "`isclose` renamed to `candidate`: `math.candidate` fails for every program"),
}


def _repair(task_id: str, fix: str, test_sha256: str) -> Repair:
    function, why = _FIXES[fix]
    return Repair(task_id, test_sha256, function, why)


REPAIRS: dict[str, tuple[Repair, ...]] = {
    "mbpp": (
        _repair("MBPP/29", "isclose", "492947f8f5c2c5a8f7ae2d1c3269d099b5378617e2abe0acf7d29bed6e827be1"),
        _repair("MBPP/32", "isclose", "e15c416a2ec0e8d20b6b0756a603916540a4548978c68493753c0436849769e3"),
        _repair("MBPP/45", "isclose", "1c198ed33cb9426e8f6e8de9d623514033791b5b8f5353c8d7478249d3554b10"),
        _repair("MBPP/56", "set", "7aae32f8bb6075613f0b3cbc754c0ffb355dd4a908e2656722816ee7ee10cb04"),
        _repair("MBPP/65", "isclose", "31f6937f773c19412c2822b6ab2664b6c1004de20b5d1264582d42d3a807bb12"),
        _repair("MBPP/76", "isclose", "80bb73421ce6b8a552b74c822b0a0d4d5f51c5ce8185a99580188fe6dc8b25ba"),
        _repair("MBPP/78", "isclose", "4ddb2988ee3efe62f124f6e9a58233980faa113b7f6dcf36c1ee4f2271c7bc91"),
        _repair("MBPP/79", "set", "67a9626d948aba7296fe148735e040a5230b8813400cba45964795c48d3acd88"),
        _repair("MBPP/87", "isclose", "41fa835ee355b043cebfa1591723a57222c72b8028d5fb68f489ed4c4edd6fb0"),
        _repair("MBPP/104", "set", "5799dfd63e9eb0e892c9ae4bc74c204a33ee35d5212fd11c610ff1bd97b77cc7"),
        _repair("MBPP/105", "isclose", "20d3c9537ad4d90674662ed123ecb7b26f3875c3a18005e939377c2d5f22c0c4"),
        _repair("MBPP/115", "isclose", "5463dcca9c30e294043f93dc05beae88aec158e0c50536694cbb6443523bc9ac"),
        _repair("MBPP/117", "isclose", "784df05568a5a71c91c134aced4d2b2613446f9742d5a947002a84a4e55691bf"),
        _repair("MBPP/141", "isclose", "6a2abb4098c4df816723c3f6928d3389ac00df10f204f21aa1a5e11c9d4b2a83"),
        _repair("MBPP/162", "isclose", "d4d99127881bcc0bab549ce9ff325b9f6c58404aff4dd69679f0837465877c68"),
        _repair("MBPP/172", "isclose", "2b043ea853983dd642a0be97d8d4bdae5c9fb51495410513995c8f6a77d7d07e"),
    ),
}
"""Per dataset name, the rows this module repairs (see the module docstring)."""

_BY_ROW = {(dataset, r.task_id, r.test_sha256): r for dataset, repairs in REPAIRS.items() for r in repairs}


def find_repair(dataset: str, row: Mapping[str, Any]) -> Repair | None:
    """The repair listed for exactly this row (same task id and test text), or None."""
    test = row.get("test")
    if not isinstance(test, str):
        return None
    digest = hashlib.sha256(test.encode("utf-8", "surrogatepass")).hexdigest()
    return _BY_ROW.get((dataset, row.get("task_id"), digest))


def repair_row(dataset: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``row``, with its ``test`` repaired when it is one of the rows listed for ``dataset``."""
    repaired = dict(row)
    repair = find_repair(dataset, row)
    if repair is not None:
        repaired["test"] = repair.fix(row["test"])
    return repaired
