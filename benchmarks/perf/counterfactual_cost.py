"""``python -m benchmarks.perf.counterfactual_cost``: what the counterfactual runs of the ``v2`` rules
add to a step.

Two envs of ``coop_procedural-v1`` built alike but for ``counterfactual`` (True: the id as registered;
False: the documented switch, which skips those runs and pays no cooperation credit) step the same
replies, one after the other for each problem (the order alternating), so both see the same machine.
The ratio of the summed step times (on / off) is the cost of the counterfactual; the bar is 1.5x.

Two reply sets:

* **reference pairs**: the problems' own ``reference_helper`` and ``reference_main`` (every stand-in
  fails, both pairings pass: every counterfactual run is made);
* **hostile main**: the same pairs, with a docstring on ``aux`` that main checks, looping forever when
  it is missing, i.e. under every stand-in (each stand-in run is then stopped at its time limit).

Results go to ``benchmarks/results/counterfactual_cost.md`` with the command and the machine's load; its
"Earlier runs" section (figures of earlier harnesses) is kept.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import llm_coop_envs
from benchmarks.machine import code_version, machine_info, uptime

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results",
                       "counterfactual_cost.md")
ENV_ID = "coop_procedural-v1"
BAR = 1.5
MARK = "zq real helper"
HISTORY = "## Earlier runs"


def make(counterfactual: bool, split: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return llm_coop_envs.make(ENV_ID, split=split, counterfactual=counterfactual)


def reference_pairs(env, n: int) -> list[tuple[str, str, str]]:
    """(task_id, helper, main) of the first ``n`` problems."""
    rows = [env.task.problems[i].row for i in range(min(n, len(env.task)))]
    return [(r["task_id"], r["reference_helper"], r["reference_main"]) for r in rows]


def hostile(pair: tuple[str, str, str], entry_point: str) -> tuple[str, str, str]:
    """The pair with main looping unless ``aux`` carries the helper's docstring (no stand-in does)."""
    task_id, helper, main = pair
    helper = helper.replace("):\n", f"):\n    {MARK!r}\n", 1)
    guard = f"    if aux.__doc__ != {MARK!r}:\n        while True:\n            pass\n"
    head, body = main.split(":\n", 1) if main.startswith(f"def {entry_point}(") else (None, None)
    if head is None:
        raise ValueError(f"{task_id}: main does not start with its entry point")
    return task_id, helper, head + ":\n" + guard + body


def time_step(env, task_id: str, helper: str, main: str) -> tuple[float, dict]:
    env.reset(options={"task_id": task_id})
    started = time.perf_counter()
    _, rewards, _, _, infos = env.step({"helper": helper, "main": main})
    return time.perf_counter() - started, {"reward": rewards["main"], **infos["main"]["details"]}


def one_repeat(envs: dict, pairs: list) -> dict[bool, list[float]]:
    """Each pair stepped by both envs, alternating which goes first."""
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for k, pair in enumerate(pairs):
        for on in ((True, False) if k % 2 == 0 else (False, True)):
            spent, details = time_step(envs[on], *pair)
            if on and not details["helper_dependence"]["checked"]:
                raise RuntimeError(f"{pair[0]}: the counterfactual did not run ({details['reward']})")
            seconds[on].append(spent)
    return seconds


def measure(envs: dict, pairs: list, repeats: int) -> dict:
    ratios, totals = [], []
    for _ in range(repeats):
        seconds = one_repeat(envs, pairs)
        totals.append((sum(seconds[True]), sum(seconds[False])))
        ratios.append(totals[-1][0] / totals[-1][1])
    return {"ratio": statistics.median(ratios), "ratios": ratios, "steps": len(pairs),
            "ms_on": 1e3 * statistics.median(t[0] for t in totals) / len(pairs),
            "ms_off": 1e3 * statistics.median(t[1] for t in totals) / len(pairs)}


def rewards_check(envs: dict, pairs: list) -> str:
    """What the two envs pay the first pair: the switch's effect on the reward, for the record."""
    _, on = time_step(envs[True], *pairs[0])
    _, off = time_step(envs[False], *pairs[0])
    return f"reward with the counterfactual {on['reward']:.2f}, switched off {off['reward']:.2f}"


def report(args: argparse.Namespace, rows: dict, loads: tuple[str, str], note: str) -> str:
    info = machine_info()
    lines = ["# Counterfactual cost: a `coop_procedural-v1` step with the counterfactual runs against the same step without",
             "", f"Command (repository root): `{' '.join(['python -m benchmarks.perf.counterfactual_cost', *sys.argv[1:]])}`",
             "", f"Machine: {info['processor']}, {len(os.sched_getaffinity(0))} usable cores, Python {info['python']}.",
             "", f"Load: `{loads[0]}` at the start, `{loads[1]}` at the end.", "",
             f"Code: {code_version()}.", "",
             f"Split `{args.split}`, the first {args.problems} problems, {args.repeats} repeats; the same sandbox settings "
             "(the env's own) on both sides; `counterfactual=False` is the env's documented switch "
             f"({note}). Ratio: the summed step times, on / off, median over the repeats. Bar: at most {BAR}x.", "",
             "| replies | steps | ms per step, on | ms per step, off | ratio, median | ratios | under the bar |",
             "|---|---:|---:|---:|---:|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['steps']} | {r['ms_on']:.1f} | {r['ms_off']:.1f} | {r['ratio']:.2f}x | "
                     f"{', '.join(f'{x:.2f}' for x in r['ratios'])} | {'yes' if r['ratio'] <= BAR else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=30)
    parser.add_argument("--hostile-problems", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    envs = {on: make(on, args.split) for on in (True, False)}
    pairs = reference_pairs(envs[True], args.problems)
    entry = {envs[True].task.problems[i].task_id: envs[True].task.problems[i].entry_point
             for i in range(len(pairs))}
    bad = [hostile(p, entry[p[0]]) for p in pairs[:args.hostile_problems]]
    for env in envs.values():  # warm interpreters started before any timing
        time_step(env, *pairs[0])
    start = uptime()
    rows = {"reference pairs": measure(envs, pairs, args.repeats),
            "hostile main, loops under every stand-in": measure(envs, bad, args.repeats)}
    loads = (start, uptime())
    text = report(args, rows, loads, rewards_check(envs, pairs))
    print(text)
    text += earlier_runs(args.out)
    with open(args.out, "w") as f:
        f.write(text)


def earlier_runs(path: str) -> str:
    """The results file's "Earlier runs" section, kept as it is (figures of earlier harnesses)."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    start = old.find(HISTORY)
    return "\n" + old[start:] if start >= 0 else ""


if __name__ == "__main__":
    main()
