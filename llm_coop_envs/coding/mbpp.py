"""# MBPP (``mbpp-v2``)

MBPP (the "sanitized" test split, 257 problems, converted to the HumanEval format) as a
two-agent task: the **helper** writes a function ``aux``, the **main** agent writes the problem's
entry-point function and may call ``aux``. The dataset name is ``"mbpp"`` (local file
``mbpp.json`` under ``$LLM_COOP_DATA_DIR``, else the Hub).

```python
import llm_coop_envs
env = llm_coop_envs.make("mbpp-v2", protocol="sequential")
observations, infos = env.reset(seed=0)
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 257 in all; ``train`` = rows 15–64 (50), ``test`` = rows 0–14 (15), ``all`` = 257 (the MAGRPO paper's slices) |
| Reward | joint, the same for both agents: ``"levels"`` (default), ``"execution"`` or your own |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

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
* v0 (removed; ``make("mbpp-v0")`` raises an error naming the current ``mbpp-v2``): scored on every assert, the
  same asserts its feedback quotes.
"""

from __future__ import annotations

from typing import Any

from llm_coop_envs.coding.factory import coding_env, warn_v1
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import load_rows

DATASET = "mbpp"


def env(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The MBPP env (``mbpp-v2``); see the module docstring for the arguments."""
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="mbpp-v2", rules="v2", **kwargs)


def env_v1(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The superseded ``mbpp-v1`` (cooperation read from the code, hidden tests in feedback); warns."""
    warn_v1("mbpp-v1", "mbpp-v2")
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="mbpp-v1", rules="v1", **kwargs)

