"""# MBPP (``mbpp-v0``)

MBPP (the "sanitized" test split, 257 problems, converted to the HumanEval format) as a
two-agent task: the **helper** writes a function ``aux``, the **main** agent writes the problem's
entry-point function and may call ``aux``. The dataset name is ``"mbpp"`` (local file
``mbpp.json`` under ``$LLM_COOP_DATA_DIR``, else the Hub).

```python
import llm_coop_envs
env = llm_coop_envs.make("mbpp-v0", protocol="sequential")
observations, infos = env.reset(seed=0)
```

| | |
|---|---|
| Agents | ``helper``, ``main`` (acting order in the sequential protocol) |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| Problems | 257 in all; ``train`` = rows 15–64 (50), ``test`` = rows 0–14 (15), ``all`` = 257 (the MAGRPO paper's slices) |
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
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

## Version history

* v0: first version.
"""

from __future__ import annotations

from typing import Any

from llm_coop_envs.coding.factory import coding_env
from llm_coop_envs.core.env import CoopEnv
from llm_coop_envs.data import load_rows

DATASET = "mbpp"


def env(*, data_path: Any = None, **kwargs: Any) -> CoopEnv:
    """The MBPP env; see the module docstring for the arguments."""
    rows = load_rows(DATASET, data_path)
    return coding_env(DATASET, rows, data_path=data_path, name="mbpp-v0", **kwargs)
