"""# CoopHumanEval (``coop_humaneval-v0``)

Two agents write one Python program together: the **helper** writes a function ``aux``, the
**main** agent writes the problem's entry-point function and may call ``aux``. The dataset is
CoopHumanEval (82 problems chosen so that a helper function is natural; the first 16 are HumanEval
problems), from the MAGRPO paper ("LLM Collaboration with Multi-Agent Reinforcement Learning",
arXiv:2508.04652).

```python
import llm_coop_envs
env = llm_coop_envs.make("coop_humaneval-v0", num_turns=2)
observations, infos = env.reset(seed=0)
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 82 in all; ``train`` = rows 0–49 (50), ``test`` = rows 50–65 (16), ``all`` = 82 |
| Reward | joint, the same for both agents: ``"levels"`` (default), ``"execution"`` or your own |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

## Shared by every coding env

The roles, the protocols (``"parallel"``, the default, or ``"sequential"``), how the two replies
become one program, how its tests run one by one in the sandbox, the rewards (``"levels"``,
``"execution"`` or your own; defined in ``llm_coop_envs.coding.reward``) and the multi-turn feedback
are the same for every coding env, and are described once, on the [Coding tasks](coding.md) page.

## Arguments

| argument | default | meaning |
|---|---|---|
| ``split`` | ``"train"`` | ``"train"``, ``"test"`` or ``"all"`` (own files: first 80 % / last 20 %) |
| ``data_path`` | ``None`` | a JSON/JSON Lines file of rows with ``task_id``, ``prompt``, ``test``, ``entry_point`` |
| ``reward`` | ``"levels"`` | ``"levels"``, ``"execution"`` or a callable |
| ``sandbox`` | ``None`` | a ``SandboxConfig`` (limits, backend); ``None`` uses the defaults |
| ``team`` | ``"pair"`` | ``"pair"`` (helper + main) or ``"single"``: one agent, ``main``, writes the whole solution |
| ``reward_mode`` | ``"joint"`` | ``"per_agent"``: each agent also gets its own reward (docs: coding tasks, per-agent rewards); without reference code here, structure credit per agent |
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

## Version history

* v0: first version.
"""

from __future__ import annotations

from typing import Any

from llm_coop_envs.coding.factory import coding_env
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import load_rows

DATASET = "coop_humaneval"


def env(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The CoopHumanEval env; see the module docstring for the arguments."""
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="coop_humaneval-v0", **kwargs)
