"""``python -m benchmarks.coding_hostile_table``: the hostile suite of the ``v2`` coding rules as a table.

Plays the replies of ``tests/coding/hostile_v2.py`` (each attack class beside the same reply without
the trick) through ``make``/``reset``/``step`` on every current coding id and on the id it
supersedes (on a procedural id, each version's own first level-2 test problem whose helper
holds a fact), one turn, and writes main's rewards: with the trick / without it, before (``v1`` rules,
``coop_procedural-v0``) and after (``v2``). The feedback classes have no reward: for them the table
counts the distinct feedback texts of replies that behave alike on the public examples and differ
on hidden calls (one text: nothing of the hidden tests reached an observation). Results go to
``benchmarks/results/coding_hostile_table.md`` with the command and the machine's load.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys

from benchmarks.machine import uptime
from llm_coop_envs.sandbox import SandboxConfig
from tests.coding.hostile_v2 import (call_reprs, CURRENT_IDS, SUPERSEDED, case, env_for, hidden_variants, state_tricks,
                                     step, tricks)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "coding_hostile_table.md")
SANDBOX = SandboxConfig(timeout_s=3.0, test_timeout_s=0.5)
FEEDBACK_CLASS = "hidden calls told apart (exception kinds, which hidden tests pass, identifiers)"


def _table_main(env, c) -> str:
    """A main answering from a table of the public examples (the prompt's), None elsewhere."""
    env.reset(options={"task_id": c.task_id})
    table = {}
    for test in env.task.problems[env._episode.index].public_tests:
        compare = next(n for n in ast.walk(ast.parse(test.label)) if isinstance(n, ast.Compare))
        table[repr(tuple(ast.literal_eval(a) for a in compare.left.args))] = ast.literal_eval(compare.comparators[0])
    return f"_TABLE = {table!r}\n\n" + c.entry_def(f"return _TABLE.get(repr(({c.params},)))")


def reward_rows(env_id: str) -> dict[str, tuple[float, float, float, float]]:
    """Class -> (v1 with, v1 without, v2 with, v2 without) on ``env_id`` (a current id)."""
    rows: dict[str, list[float]] = {}
    for version in (SUPERSEDED[env_id], env_id):
        c = case(version)
        env = env_for(version, c, sandbox=SANDBOX)
        pairs = {**tricks(c), **{f"state kept between tests: {k}": v for k, v in state_tricks(c).items()},
                 "lookup table of the prompt examples (without: a correct main)": (
                     (c.helper, _table_main(env, c)), (c.helper, c.solo()))}
        for name, (trick, baseline) in pairs.items():
            rows.setdefault(name, []).extend(step(env, c, *replies)[0][0] for replies in (trick, baseline))
    return {name: tuple(values) for name, values in rows.items()}


def feedback_row(env_id: str) -> tuple[str, str]:
    """(v1, v2): distinct feedback texts over two turns among the hidden-call variants."""
    out = []
    for version in (SUPERSEDED[env_id], env_id):
        c = case(version)
        env = env_for(version, c, sandbox=SANDBOX, num_turns=3)
        variants = hidden_variants(c, call_reprs(env, c), call_reprs(env, c, hidden=True))
        texts = {tuple(tuple(info["feedback"] for info in (infos["helper"], infos["main"]))
                       for _, _, infos in step(env, c, *replies, turns=2)) for replies in variants.values()}
        out.append(f"{len(texts)} of {len(variants)}")
    return out[0], out[1]


def _fmt(values: list[float]) -> str:
    distinct = sorted({round(v, 2) for v in values})
    return " / ".join(f"{v:.2f}" for v in distinct)


def table(ids: tuple[str, ...]) -> list[str]:
    per_id = {env_id: reward_rows(env_id) for env_id in ids}
    names = list(next(iter(per_id.values())))
    lines = ["| attack class | before (v1): with the trick | before (v1): without | after (v2): with the trick | after (v2): without |",
             "|---|---|---|---|---|"]
    for name in names:
        cols = [_fmt([per_id[i][name][k] for i in ids]) for k in range(4)]
        lines.append(f"| {name} | " + " | ".join(cols) + " |")
    feedback = {env_id: feedback_row(env_id) for env_id in ids}
    lines.append(f"| {FEEDBACK_CLASS}: distinct feedback texts | " + "; ".join(f"{i}: {feedback[i][0]}" for i in ids)
                 + " | (same replies) | " + "; ".join(f"{i}: {feedback[i][1]}" for i in ids) + " | (same replies) |")
    lines += ["", "Per id (v1 with / without -> v2 with / without):", "",
              "| attack class | " + " | ".join(ids) + " |", "|---|" + "---|" * len(ids)]
    for name in names:
        cells = [f"{r[0]:.2f} / {r[1]:.2f} -> {r[2]:.2f} / {r[3]:.2f}" for r in (per_id[i][name] for i in ids)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="+", default=list(CURRENT_IDS))
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    start = uptime()
    lines = table(tuple(args.ids))
    text = "\n".join(["# The hostile suite of the `v2` coding rules: main's reward with and without each trick", "",
                      f"Command (repository root): `{' '.join(['python -m benchmarks.coding_hostile_table', *sys.argv[1:]])}`",
                      "", f"Load: `{start}` at the start, `{uptime()}` at the end (rewards do not depend on it).", "",
                      "One turn, `reward_mode=\"joint\"`, main's reward. Before: the superseded id (`-v1` rules, "
                      "`coop_procedural-v0`); after: the current id. A cell with several values lists the distinct "
                      f"ones over the ids ({', '.join(args.ids)}); the second table gives each id. The feedback row "
                      "counts distinct feedback texts (two turns) among replies alike on the public examples.", ""]
                     + lines) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
