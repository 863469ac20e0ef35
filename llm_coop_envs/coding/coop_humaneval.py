"""# CoopHumanEval (``coop_humaneval-v2``)

Two agents write one Python program together: the **helper** writes a function ``aux``, the
**main** agent writes the problem's entry-point function and may call ``aux``. The dataset is
CoopHumanEval (82 problems chosen so that a helper function is natural; the first 16 are HumanEval
problems), from the MAGRPO paper ("LLM Collaboration with Multi-Agent Reinforcement Learning",
arXiv:2508.04652).

```python
import llm_coop_envs
env = llm_coop_envs.make("coop_humaneval-v2", num_turns=2)
observations, infos = env.reset(seed=0)
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 82 in all; ``train`` = rows 0–49 (50), ``test`` = rows 50–65 (16), ``all`` = 82 |
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
* v0 (deprecated; ``make`` warns): scored on every assert, the same asserts its feedback quotes.
"""

from __future__ import annotations

from typing import Any

from llm_coop_envs.coding.factory import coding_env, warn_v0, warn_v1
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import load_rows

DATASET = "coop_humaneval"


def env(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The CoopHumanEval env (``coop_humaneval-v2``); see the module docstring for the arguments."""
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="coop_humaneval-v2", rules="v2", **kwargs)


def env_v1(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The superseded ``coop_humaneval-v1`` (cooperation read from the code, hidden tests in feedback); warns."""
    warn_v1("coop_humaneval-v1", "coop_humaneval-v2")
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="coop_humaneval-v1", rules="v1", **kwargs)


def env_v0(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The deprecated ``coop_humaneval-v0`` (tests shown in feedback also score); warns with its holes."""
    warn_v0("coop_humaneval-v0", "coop_humaneval-v2")
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="coop_humaneval-v0", **kwargs)
