"""Calibration figures of ``coop_procedural-v2``'s cooperative level (and of its pair prompts).

From the episodes of an ``llm-coop eval`` run (``episodes.jsonl``), per method:

* pass rate; helper-dependent solves (solved with the env's counterfactual finding that main needs
  ``aux``: the records' ``helper_needed``, read, not recomputed); main calls ``aux``;
* groups (the samples of one problem) whose ``tests`` component varies;
* for the pair (method ``env``), main's own replies re-scored by the env with the helper's reply
  replaced: by prose, by the stub ``def aux(*a): return None`` and by the reference ``aux``;
* the helper's replies that define main's function (dropped by the env) instead of ``aux``; and the
  joined programs lost to the helper's cut tail (the episode fails, and passes when the helper's reply is
  cut back to the code that parses).

Without a model: ``--blind N`` scores, on the first N training problems of a level, the best main that
does not call ``aux`` (main's reference with the family's most frequent fact inlined, the helper silent).

    python -m benchmarks.cooperative_calibration runs/calibration/v2_l4/episodes.jsonl --level 4
    python -m benchmarks.cooperative_calibration --blind 1200 --level 4

The held-out families are calibrated on draws of their generators from the training stream
(:func:`heldout_family_draws`), never on the ``heldout_families`` split itself.
"""

from __future__ import annotations

import argparse
import collections
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.procedural_calibration import read_episodes
from llm_coop_envs.coding.parsing import parse_reply

ENV_ID = "coop_procedural-v2"
PROSE = "I will write the helper function aux for you."
STUB = "```python\ndef aux(*a):\n    return None\n```"
SPREAD_DRAWS = 2000
HELDOUT_DRAWS_ID = "coop_procedural_heldout_draws-v2"
"""The in-process id of :func:`heldout_family_draws` (never registered by the package)."""


def make_env(split: str, level: int, env_id: str = ENV_ID):
    import llm_coop_envs
    from llm_coop_envs.coding.procedural.env import env_v2

    if env_id == ENV_ID and env_id not in llm_coop_envs.registered_ids():  # until its calibration is done
        return env_v2(split=split, level=level)
    return llm_coop_envs.make(env_id, split=split, level=level)


def heldout_family_draws(*, level: int = 4, problems: int = 96, split: str = "train", **kwargs: Any):
    """An env of the held-out families' problems drawn from the *training* stream (unregistered, for
    calibration only): the same generators, levels and prompts as ``coop_procedural-v2``'s
    ``heldout_families`` split, other draws, and none of that split's own problems (a draw equal to one
    of them is left out), so calibrating on it evaluates no held-out problem. Register it in-process to
    run ``llm-coop eval`` on it (the module's docstring)."""
    from llm_coop_envs.coding.factory import coding_env
    from llm_coop_envs.coding.procedural.build import SUITE
    from llm_coop_envs.coding.procedural.env import PROMPTS_V2, env_v2
    from llm_coop_envs.coding.procedural.families import HELDOUT_FAMILIES
    from llm_coop_envs.coding.procedural.generate import TrainRows

    if split != "train":
        raise ValueError(f"these are training-stream draws only (split='train'), got split={split!r}")
    held_out = env_v2(split="heldout_families", level=level).task
    held_out_ids = {held_out.task_id(i) for i in range(len(held_out))}
    draws = TrainRows(tuple(HELDOUT_FAMILIES), (level,), checks=True, prompts=PROMPTS_V2)
    rows = [row for row in draws[:problems] if row["task_id"] not in held_out_ids]
    return coding_env(SUITE, rows, split="all", name=HELDOUT_DRAWS_ID, rules="v2", **kwargs)


def method_table(episodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row of figures per method."""
    by_method: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for episode in episodes:
        by_method[episode["method"]].append(episode)
    return [_figures(method, rows) for method, rows in sorted(by_method.items())]


def _figures(method: str, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for episode in episodes:
        groups[episode["task_id"]].append(episode)
    varies = [len({round(e["components"].get("tests", 0.0), 9) for e in g}) > 1 for g in groups.values()]
    share = lambda flag: sum(bool(flag(e)) for e in episodes) / len(episodes)  # noqa: E731
    return {"method": method, "problems": len(groups), "samples": len(episodes) // len(groups),
            "pass_rate": share(lambda e: e["solved"]), "helper_dependent": share(lambda e: e.get("helper_needed")),
            "calls_aux": share(lambda e: e.get("cooperates")), "tests_vary": sum(varies) / len(groups)}


def rescored(env, episodes: Sequence[dict[str, Any]], helper_of) -> float:
    """The pass rate of the pair's episodes with the helper's reply replaced by ``helper_of(problem row,
    episode)``, scored by ``env`` (whose split holds the episodes' problems)."""
    pair = [e for e in episodes if e["method"] == "env"]
    items = [(index, {"helper": helper_of(env.task.problems[index].row, e), "main": e["replies"]["main"]})
             for e in pair for index in [_index(env, e["task_id"])]]
    return sum(ev.solved for ev in env.task.evaluate_many(items)) / len(items)


def rescored_episodes(env, episodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pair's episodes with their verdict re-made by ``env`` from the recorded replies (the replies
    of an earlier run, scored by the env's current rules), as method ``env (re-scored)``."""
    from llm_coop_envs.coding.dependence import solved_needing_helper

    pair = [e for e in episodes if e["method"] == "env"]
    items = [(_index(env, e["task_id"]), dict(e["replies"])) for e in pair]
    out = []
    for episode, ev in zip(pair, env.task.evaluate_many(items)):
        info = {"solved": ev.solved, "details": ev.details}
        uses = ev.details.get("helper_use") if isinstance(ev.details.get("helper_use"), dict) else {}
        out.append({**episode, "method": "env (re-scored)", "solved": ev.solved,
                    "components": dict(ev.reward.components), "helper_needed": solved_needing_helper(info),
                    "cooperates": uses.get("calls_helper", episode.get("cooperates"))})
    return out


def _index(env, task_id: str) -> int:
    try:
        index = env.task.index_of(task_id)
    except ValueError:  # a training problem not drawn yet in this process: the runs use the first ones
        index = None
    if index is None:
        index = next(i for i in range(len(env.task)) if env.task.task_id(i) == task_id)
    return index


def helper_writes_main(env, episodes: Sequence[dict[str, Any]]) -> float:
    """Share of the pair's helper replies that define main's entry point."""
    pair = [e for e in episodes if e["method"] == "env"]
    entry = lambda e: env.task.problems[_index(env, e["task_id"])].entry_point  # noqa: E731
    return sum(entry(e) in parse_reply(e["replies"]["helper"]).functions() for e in pair) / len(pair)


def cut_tail_losses(env, episodes: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(episodes lost to the helper's unparsable tail, pair episodes): failed as given, passed with the
    helper's reply cut back to the code that parses."""
    pair = [e for e in episodes if e["method"] == "env"]
    broken = [e for e in pair if not e["solved"]
              and any(p.kind == "broken" for p in parse_reply(e["replies"]["helper"]).pieces)]
    if not broken:
        return 0, len(pair)
    parsed = lambda e: "\n\n".join(p.source for p in parse_reply(e["replies"]["helper"]).pieces  # noqa: E731
                                   if p.kind != "broken")
    items = [(_index(env, e["task_id"]), {"helper": parsed(e), "main": e["replies"]["main"]}) for e in broken]
    return sum(ev.solved for ev in env.task.evaluate_many(items)), len(pair)


def blind_main_rate(level: int, problems: int, env_id: str = ENV_ID) -> tuple[float, int]:
    """(pass rate, problems) of main's reference with the family's most frequent fact inlined and the
    helper silent, on the first ``problems`` training problems of ``level``."""
    env = make_env("train", level, env_id)
    items = []
    for index in range(problems):
        row = env.task.problems[index].row
        inlined = most_frequent_aux(row["family"], level).replace("def aux(", "def fact_(")
        main = inlined + "\n" + row["reference_main"].replace("aux(", "fact_(")
        items.append((index, {"helper": PROSE, "main": f"```python\n{main}```"}))
    return sum(ev.solved for ev in env.task.evaluate_many(items)) / problems, problems


def most_frequent_aux(family: str, level: int) -> str:
    """The reference ``aux`` the family draws most often at ``level`` (its most frequent fact)."""
    from llm_coop_envs.coding.procedural.families import draft_for

    counts: collections.Counter[str] = collections.Counter()
    for index in range(SPREAD_DRAWS):
        draft = draft_for(family, random.Random(f"most-frequent/{family}/{level}/{index}"), level)
        counts[_with_param(draft.reference_helper)] += 1
    return counts.most_common(1)[0][0]


def _with_param(helper: str) -> str:
    # The same fact under another item name is the same fact: count it under its normalised source.
    from llm_coop_envs.coding.procedural.draw_checks import normalised

    return normalised(helper) + "\n"


def pair_figures(env, episodes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    lost, total = cut_tail_losses(env, episodes)
    return {
        "main with prose": rescored(env, episodes, lambda row, e: PROSE),
        "main with the stub aux": rescored(env, episodes, lambda row, e: STUB),
        "main with the reference aux": rescored(env, episodes, lambda row, e: f"```python\n{row['reference_helper']}```"),
        "helper defines main's function": helper_writes_main(env, episodes),
        "lost to the helper's cut tail": f"{lost}/{total}",
    }


def markdown(rows: Sequence[dict[str, Any]], pair: dict[str, Any] | None) -> str:
    lines = ["| method | problems | samples | pass rate | helper-dependent solves | main calls aux | groups whose tests vary |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['problems']} | {r['samples']} | {r['pass_rate']:.1%} | "
                     f"{r['helper_dependent']:.1%} | {r['calls_aux']:.1%} | {r['tests_vary']:.1%} |")
    if pair:
        lines += ["", "| the pair's episodes | value |", "| --- | ---: |"]
        lines += [f"| {k} | {v:.1%} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in pair.items()]
    return "\n".join(lines).replace("%", " %")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("episodes", type=Path, nargs="?", help="episodes.jsonl of an llm-coop eval run")
    parser.add_argument("--env", default=ENV_ID, help="the env id the run evaluated")
    parser.add_argument("--split", default="train")
    parser.add_argument("--level", type=int, required=True)
    parser.add_argument("--rescore", action="store_true",
                        help="also score the pair's recorded replies under the env's current rules")
    parser.add_argument("--blind", type=int, default=0, help="score the best main without aux on N problems")
    args = parser.parse_args(argv)
    if args.blind:
        rate, problems = blind_main_rate(args.level, args.blind, args.env)
        print(f"best main without aux: {rate:.1%} of {problems} training problems at level {args.level}")
    if args.episodes:
        episodes = read_episodes(args.episodes)
        has_pair = any(e["method"] == "env" for e in episodes)
        env = make_env(args.split, args.level, args.env)
        if args.rescore and has_pair:
            episodes = [*episodes, *rescored_episodes(env, episodes)]
        print(markdown(method_table(episodes), pair_figures(env, episodes) if has_pair else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
