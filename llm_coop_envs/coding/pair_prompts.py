"""The ``"pair-v2"`` prompt set (``coop_procedural-v2``): prompts a pair of small models can use.

Measured on ``coop_procedural-v0``/``-v1`` with the default model, the default prompts cost the pair
its own skill: under main's prompt main's code solved about half the problems the single agent solved
with the solo prompt, and the helper, shown main's whole problem, wrote main's function instead of
``aux`` in most episodes (dropped by the env), often running out of tokens on the way. So in this set

* **on a problem that needs no helper, main's prompt is the single agent's**, word for word (both
  offer ``aux``'s contract as "a useful helper function"): with one line on ``aux`` worded for the
  pair ("written by a partner ..., do not define it yourself") main alone solved 17 of 48 level-1
  training problems greedily against the single agent's 24, two wordings alike; at the cooperative
  level main's prompt is the single agent's problem plus that line;
* **the helper sees only ``aux``'s contract and its fact**, written as the function to complete, never
  main's problem: it has nothing else to write, and its reply stays short;
* **the single agent (``team="single"``) is shown the helper's fact too**, so one agent has all the
  information the pair has; where main's stated expression calls ``aux``, its problem shows ``aux``
  with its fact as a function to complete above main's (told only that ``aux`` is "useful", or in
  words that its code must define it, the default model called it undefined and solved none of 48
  cooperative training problems);
* **a reply's first code block is its code** (the prompts ask for one block; the env reads rows of this
  set with :func:`~llm_coop_envs.coding.parsing.parse_reply`'s ``first_block``): the default model
  repeats its answer block after block until the token cap cuts the last one, and a cut ``return x + 1``
  of ``return x + 12`` still parses and, defined last, replaced the right one.

A row names its prompt set in ``row["prompts"]``; rows without one get the default prompts
(:mod:`llm_coop_envs.coding.prompts`), so no registered id's observations change.
"""

from __future__ import annotations

from llm_coop_envs.coding.problems import CodingProblem

PROMPT_SET = "pair-v2"
HELPER_NAME = "aux"
_CODE_ONLY = "Reply with Python code only, in one ```python block; no tests, no example usage, no explanations."


def uses_pair_prompts(problem: CodingProblem) -> bool:
    return problem.row.get("prompts") == PROMPT_SET


def main_prompt(problem: CodingProblem, protocol: str) -> str:
    if not _fact(problem):  # a problem that needs no helper: main sees exactly what one agent sees
        return solo_prompt(problem)
    where = ("its code is shown below the problem" if protocol == "sequential"
             else "it is defined before your code runs")
    return "\n".join([*_solo_head(problem), f"A useful helper function, written by a partner ({where}; do not "
                      f"define it yourself): {_contract(problem)}", _CODE_ONLY])


def helper_prompt(problem: CodingProblem) -> str:
    return "\n".join([
        "You are a Python programmer.", "", "Complete this function:", "", "```python", _aux_stub(problem), "```", "",
        f"Write the whole function `{HELPER_NAME}` and nothing else.", _CODE_ONLY,
    ])


def solo_prompt(problem: CodingProblem) -> str:
    if not _fact(problem):  # nothing is hidden from main: the helper is optional, as under main's prompt
        return "\n".join([*_solo_head(problem), f"A useful helper function: {_contract(problem)}", _CODE_ONLY])
    # The stated expression calls aux, which nobody else writes here: both functions are to complete
    # (told in words to define aux, the default model called it undefined on 46 of 48 problems).
    return "\n".join([
        "You are a Python programmer.", "", "Problem:", _aux_stub(problem), "", problem.prompt.rstrip(), "",
        f"Write the complete functions `{HELPER_NAME}` and `{problem.entry_point}` with the signatures above.",
        _CODE_ONLY])


def _aux_stub(problem: CodingProblem) -> str:
    """``aux``'s signature with its contract and fact as its docstring."""
    signature, doc = _spec(problem)
    return f'{signature}\n    """{f"{doc} {_fact(problem)}".strip()}"""'


def _solo_head(problem: CodingProblem) -> list[str]:
    return ["You are a Python programmer.", "", "Problem:", problem.prompt.rstrip(), "",
            f"Write the complete function `{problem.entry_point}` with the signature above."]


def _spec(problem: CodingProblem) -> tuple[str, str]:
    spec = problem.row["helper"]
    return spec["signature"].strip(), spec["doc"].strip()


def _contract(problem: CodingProblem) -> str:
    signature, doc = _spec(problem)
    return f"`{signature}` {doc}"


def _fact(problem: CodingProblem) -> str:
    fact = problem.row.get("helper_fact")
    return fact.strip() if isinstance(fact, str) else ""
