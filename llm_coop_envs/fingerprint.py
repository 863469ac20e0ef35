"""What an env id means, as a few hashes: an id must keep meaning what it meant when a result named it.

A fingerprint hashes, for an env built by one id with its default arguments:

* ``problems`` and ``problems/test``: how many problems the default and the ``test`` split hold and the
  ids of their first 20 (a reordered or rewritten split changes it);
* ``reset/<i>``: both agents' observations of problems 0 and 1 at reset (prompts);
* ``hidden_tests``: the scoring tests of problems 0 to 2 (coding envs; ``-`` for others);
* ``step/<reply>``: the rewards, reward components, feedback and turn-2 observations after a fixed honest
  reply: ``reference`` (the dataset's reference pair, where the problem has one), ``wrong`` (code that
  defines the entry point and returns None) and ``prose`` (no code at all).

Stored fingerprints are never edited: a change to what an id's problems, observations or rewards are
makes a new version (``tests/test_env_fingerprints.py``). A new id's fingerprint is added with

    python -m llm_coop_envs.fingerprint --add tests/env_fingerprints.json

which writes the ids missing from that file and leaves every stored one as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FIRST_IDS = 20
PROSE = "I would read the input carefully, handle the edge cases, and return the answer the problem asks for."
WRONG_TEXT = "The committee met on Tuesday and agreed to repaint the fence."


class Unavailable(RuntimeError):
    """The id needs data or a language model this machine does not have; the message says which."""


def digest(value: Any) -> str:
    """A short sha256 of a JSON-friendly value (keys sorted, floats as written by ``json``)."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(env_id: str) -> dict[str, str]:
    """The fingerprint of a registered id (its default arguments); :class:`Unavailable` where the
    id's data or language model is missing here."""
    import llm_coop_envs

    spec = llm_coop_envs.spec(env_id)

    def make(**kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a deprecated id is fingerprinted like any other
            try:
                return llm_coop_envs.make(env_id, **{k: v for k, v in kwargs.items() if spec.accepts(k)})
            except OSError as error:  # no data here (a missing file, the Hub out of reach)
                raise Unavailable(f"{env_id}: no data here ({' '.join(str(error).split())[:160]})") from None

    return fingerprint_of(make)


def fingerprint_of(make: Callable[..., Any]) -> dict[str, str]:
    """The fingerprint of the env that ``make(**kwargs)`` builds (``num_turns``, ``split`` are passed
    where the env takes them); the negative controls pass a changed copy this way."""
    env = make(num_turns=2)
    task = env.task
    parts = {"problems": digest(_first_ids(task))}
    try:
        parts["problems/test"] = digest(_first_ids(make(num_turns=2, split="test").task))
    except (TypeError, ValueError):
        parts["problems/test"] = "-"  # no test split
    for index in (0, 1):
        observations, _ = env.reset(seed=0, options={"index": index})
        parts[f"reset/{index}"] = digest(observations)
    parts["hidden_tests"] = digest([_hidden_tests(task, i) for i in range(min(3, len(task)))])
    for name, replies in fixed_replies(env).items():
        parts[f"step/{name}"] = digest(_step(env, replies)) if replies is not None else "-"
    return parts


def fixed_replies(env: Any) -> dict[str, dict[str, str] | None]:
    """The honest replies every id is scored on, per agent, for problem 0."""
    agents = tuple(env.possible_agents)
    problem = getattr(getattr(env.task, "problems", None), "__getitem__", lambda i: None)(0)
    if problem is None:  # a writing task
        return {"reference": None, "wrong": dict.fromkeys(agents, WRONG_TEXT), "prose": dict.fromkeys(agents, PROSE)}
    wrong = {"helper": "```python\ndef aux(x):\n    return x\n```",
             "main": f"```python\ndef {problem.entry_point}(*args):\n    return None\n```"}
    return {"reference": _reference(problem, agents), "wrong": _for(agents, wrong), "prose": dict.fromkeys(agents, PROSE)}


def _reference(problem: Any, agents: tuple[str, ...]) -> dict[str, str] | None:
    row = problem.row
    if isinstance(row.get("reference_helper"), str) and isinstance(row.get("reference_main"), str):
        pair = {"helper": row["reference_helper"], "main": row["reference_main"]}
    elif isinstance(row.get("canonical_solution"), str):
        pair = {"helper": "def aux(x):\n    return x", "main": row["prompt"] + row["canonical_solution"]}
    else:
        return None
    if agents == ("main",):  # one agent writes the whole solution
        pair = {"main": pair["helper"] + "\n\n" + pair["main"]}
    return _for(agents, {name: f"```python\n{code}\n```" for name, code in pair.items()})


def _for(agents: tuple[str, ...], replies: Mapping[str, str]) -> dict[str, str]:
    return {agent: replies.get(agent, replies["main"]) for agent in agents}


def _first_ids(task: Any) -> list[Any]:
    return [len(task), [task.task_id(i) for i in range(min(FIRST_IDS, len(task)))]]


def _hidden_tests(task: Any, index: int) -> Any:
    problem = getattr(getattr(task, "problems", None), "__getitem__", lambda i: None)(index)
    return "-" if problem is None else [test.source for test in problem.tests]


def _step(env: Any, replies: Mapping[str, str]) -> dict[str, Any]:
    env.reset(seed=0, options={"index": 0})
    try:
        observations, rewards, _, _, infos = env.step(dict(replies))
    except RuntimeError as error:
        if type(error).__name__ == "LanguageModelUnavailable":
            raise Unavailable(f"no language model here ({' '.join(str(error).split())[:160]})") from None
        if type(error).__name__ == "ParserUnavailable":  # the -v5 writing envs' claim check (the claims extra)
            raise Unavailable(f"no claims parser here ({' '.join(str(error).split())[:160]})") from None
        raise
    return {
        "rewards": {agent: round(float(value), 4) for agent, value in rewards.items()},
        "components": {agent: {k: round(float(v), 4) for k, v in (info.get("reward_components") or {}).items()}
                       for agent, info in infos.items()},
        "feedback": {agent: info.get("feedback") for agent, info in infos.items()},
        "next": observations,
    }


def read(path: Path) -> dict[str, dict[str, str]]:
    return json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).is_file() else {}


def add_missing(path: Path, ids: list[str] | None = None) -> list[str]:
    """Fingerprint the registered ids that ``path`` lacks and add them; never rewrite a stored one.
    Returns the ids added (those whose data or model is missing here are left for a machine that has them)."""
    import llm_coop_envs

    stored = read(path)
    added = []
    for env_id in ids or llm_coop_envs.registered_ids():
        if env_id in stored:
            continue
        try:
            stored[env_id] = fingerprint(env_id)
        except Unavailable as error:
            print(f"skipped {env_id}: {error}", file=sys.stderr)
            continue
        added.append(env_id)
    Path(path).write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n", encoding="utf-8")
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m llm_coop_envs.fingerprint", description=__doc__.splitlines()[0])
    parser.add_argument("--add", type=Path, required=True, metavar="FILE", help="the fingerprints file to add missing ids to")
    parser.add_argument("ids", nargs="*", help="only these ids (default: every registered id)")
    args = parser.parse_args(argv)
    added = add_missing(args.add, args.ids or None)
    print(f"added {len(added)}: {', '.join(added) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
