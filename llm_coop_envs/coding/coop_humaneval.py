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
| Reward | joint, the same for both agents: ``"levels"`` (default, 0–4.0) or ``"execution"`` |
| Solved | every test of the problem passes (ends the episode when ``stop_when_solved``) |

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
| ``reward_mode`` | ``"joint"`` | ``"per_agent"``: each agent also gets its own reward (docs: coding tasks, per-agent rewards); without reference code here, structure credit per agent |
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

Multi-turn feedback (``feedback="tests"``, the default) tells each agent whether its function
was found, syntax errors with line and column, which asserts failed and with what error, and
whether main uses the helper or only wraps it.

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
