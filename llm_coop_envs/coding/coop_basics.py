"""# CoopBasics (``coop_basics-v2``)

A cooperative coding suite written by this project and shipped inside the package, so it loads
offline with no download and no data folder. Each problem splits naturally into a helper function
and a main function that uses it: the **helper** writes ``aux`` as the problem specifies it, the
**main** agent writes the entry-point function and calls ``aux``. The problems are easy on
purpose, in tiers from trivial to moderate, so that a small model (SmolLM2-135M-Instruct) solves
some of them untrained and learning has room to show. They are original: small invented domains
(shop stock, game scores, temperature logs, ticket codes, ...), not paraphrases of HumanEval, MBPP
or other public sets, so the held-out split is unseen by any benchmark a pretrained model met.

```python
import llm_coop_envs
env = llm_coop_envs.make("coop_basics-v2", split="test", tier=1)
observations, infos = env.reset(seed=0)
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol); ``team="single"``: ``main`` alone |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | every problem of the packaged ``tier<N>.json`` files; ``split`` picks ``train``, ``test`` (one third of each tier, spread through it) or ``all``; ``test`` takes the tiers in turns (1, 2, 3, 1, ...), so its first N problems are a balanced sample |
| Size | 133 problems (tiers 1/2/3: 45/44/44), 43 of them in ``test`` (15/14/14) |
| Untrained default model | greedy pass rate on ``test``: 9.3 % as a pair, 14.0 % alone; tier 1 only: 26.7 % and 40.0 % (``benchmarks/results/coop_basics_calibration.md``) |
| Reward | joint, the same for both agents: ``"levels"`` (default), ``"execution"`` or your own |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

## Tiers

* **1, trivial**: ``aux`` is one arithmetic or string expression; main is one loop, comprehension
  or builtin call over a list that uses it. The docstring says exactly what to compute.
* **2, easy**: ``aux`` is a short predicate or transform; main filters, counts, sums or builds a string with it.
* **3, moderate**: ``aux`` does a small computation (a digit sum, a clamp, a dict lookup); main
  combines it over a list with a condition, or accumulates a list or dict.

## Prompts

Every problem names its helper: a signature (``def aux(price, count):``) and one sentence saying
what ``aux`` returns. The helper is asked to write exactly that function; main is told what ``aux``
takes and returns and to call it (it does not see the helper's code in the parallel protocol); the
single agent of ``team="single"`` is told the same helper would be useful. Otherwise the prompts,
the protocols (``"parallel"``, ``"sequential"``), the program assembly and the multi-turn feedback
are those of ``coop_humaneval-v2``.

## Tests as data

Each problem carries its tests as data: positional ``args``, the ``expected`` return value and an
optional ``compare`` (``"eq"``, the default, or ``"isclose"`` for floats). They are rendered into a
``check(candidate)`` source with one assert per test, ``assert candidate(<args>) == <expected>`` or
``assert math.isclose(candidate(<args>), <expected>, rel_tol=1e-6, abs_tol=1e-9)``, with the
``repr`` of the values so the comparison is exact; each assert is scored on its own in the sandbox.
A test marked ``"public": true`` (every problem has one: its docstring example) may be quoted in
feedback and never scores under v1; the other five (six in two problems) are hidden and score.

## Reward

The coding rewards of every coding env (``llm_coop_envs.coding.reward``, on the
[Coding tasks](coding.md) page). Every problem's reference helper and main earn the maximum of
``"levels"`` in the tests of this package.

## Arguments

| argument | default | meaning |
|---|---|---|
| ``split`` | ``"train"`` | ``"train"``, ``"test"`` or ``"all"``: each problem's own ``split`` field |
| ``tier`` | ``None`` | only these tiers: an int (``1``) or a list (``[1, 2]``); ``None`` is every tier |
| ``suite_dir`` | ``None`` | a folder of your own ``tier<N>.json`` files in this format; ``None`` is the packaged suite |
| ``reward``, ``sandbox``, ``team`` | | as in ``coop_humaneval-v2`` |
| ``reward_mode`` | ``"joint"`` | ``"per_agent"``: each agent also gets its own reward (docs: coding tasks, per-agent rewards); here each agent is paired with its partner's reference code |
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

## File format

A suite folder holds ``tier1.json``, ``tier2.json``, ...: each a JSON list of problems with
``task_id`` (``coop_basics/t<tier>/<slug>``), ``tier``, ``split``, ``entry_point``, ``prompt`` (the
signature and a docstring with examples), ``helper`` (``{"signature": "def aux(...):", "doc": "..."}``),
``reference_helper``, ``reference_main`` and ``tests`` (at least 5). The loader checks every field
and that task ids, entry points and prompts are unique, and says which file and problem is wrong.

## Version history

* v2: the ``v2`` scoring rules (``llm_coop_envs.coding.rules``): cooperation credit only when main's
  program needs the helper's ``aux`` (stand-ins for ``aux`` fail, and main with the reference ``aux``
  and the helper with the reference main pass: ``llm_coop_envs.coding.dependence``); feedback from
  public tests only, nothing about hidden tests; problems whose hidden tests never told ``aux`` from a
  stand-in get further hidden tests (``llm_coop_envs.coding.extra_hidden``). Same problems and splits as v1.
* v1 (superseded; ``make`` warns with its holes): scored on hidden tests only (each problem's tests marked ``"public": true`` feed back between
  turns and never score); ``helper_defined`` and the cooperation levels pay only when every hidden test
  passes (``llm_coop_envs.coding.rules``). The committed learning results on the results page were
  measured on v0. Its ``test`` split holds the same problems as v0's, in turns of tiers (v0: tier by
  tier), so that a quick check of the first N problems is not all tier 1.
* v0 (deprecated; ``make`` warns): scored on every test, the same tests its feedback quotes.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

from llm_coop_envs.coding.factory import coding_env, warn_v0, warn_v1
from llm_coop_envs.coding.suite import load_suite, packaged_suite_dir, to_row
from llm_coop_envs.core.env import CoopEnv

SUITE = "coop_basics"


def env(
    *,
    split: str = "train",
    tier: int | Iterable[int] | None = None,
    suite_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> CoopEnv:
    """The CoopBasics env (``coop_basics-v2``); see the module docstring for the arguments."""
    return _make("coop_basics-v2", split, tier, suite_dir, rules="v2", test_in_turns=True, **kwargs)


def env_v1(
    *,
    split: str = "train",
    tier: int | Iterable[int] | None = None,
    suite_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> CoopEnv:
    """The superseded ``coop_basics-v1`` (cooperation read from the code, hidden tests in feedback); warns."""
    warn_v1("coop_basics-v1", "coop_basics-v2")
    return _make("coop_basics-v1", split, tier, suite_dir, rules="v1", test_in_turns=True, **kwargs)


def env_v0(
    *,
    split: str = "train",
    tier: int | Iterable[int] | None = None,
    suite_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> CoopEnv:
    """The deprecated ``coop_basics-v0`` (tests shown in feedback also score); warns with its holes."""
    warn_v0("coop_basics-v0", "coop_basics-v2")
    return _make("coop_basics-v1", split, tier, suite_dir, **kwargs)


def _make(name: str, split: str, tier: Any, suite_dir: Any, test_in_turns: bool = False, **kwargs: Any) -> CoopEnv:
    if "data_path" in kwargs:
        raise TypeError(f"{name} has no data_path: pass suite_dir= a folder of tier<N>.json files.")
    rows = select(suite_rows(suite_dir), split, tier)
    if test_in_turns and split == "test":
        rows = in_turns(rows)
    return coding_env(SUITE, rows, split="all", name=name, **kwargs)


def suite_rows(suite_dir: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Every problem of the suite as a HumanEval-style row (plus the suite's own fields)."""
    return list(_rows(str(suite_dir or packaged_suite_dir(SUITE))))


@functools.lru_cache(maxsize=8)
def _rows(folder: str) -> tuple[dict[str, Any], ...]:
    # Envs are made many times (trainers, tests, evaluation): read and check the files once per process.
    return tuple(to_row(problem) for problem in load_suite(folder))


def select(rows: list[dict[str, Any]], split: str, tier: int | Iterable[int] | None) -> list[dict[str, Any]]:
    """The rows of ``split`` ("train", "test" or "all") in the chosen tiers."""
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}.")
    tiers = _tiers(tier, {row["tier"] for row in rows})
    chosen = [row for row in rows if row["tier"] in tiers and split in ("all", row["split"])]
    if not chosen:
        raise ValueError(f"No {SUITE} problems in split {split!r} and tiers {sorted(tiers)}.")
    return chosen


def in_turns(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with the tiers taking turns (the first of each tier, then the second of each, ...)."""
    by_tier: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_tier.setdefault(row["tier"], []).append(row)
    rank = {id(row): (position, tier) for tier, group in by_tier.items() for position, row in enumerate(group)}
    return sorted(rows, key=lambda row: rank[id(row)])


def _tiers(tier: int | Iterable[int] | None, present: set[int]) -> set[int]:
    if tier is None:
        return present
    tiers = {tier} if isinstance(tier, int) else set(tier)
    unknown = tiers - present
    if unknown or not all(isinstance(t, int) for t in tiers):
        raise ValueError(f"tier must be one of {sorted(present)} or a list of them, got {tier!r}.")
    return tiers
