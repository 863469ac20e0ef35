"""``python -m benchmarks.perf.before_after --before PATH``: this checkout against an earlier one, run
alternately in one benchmark run, for a change that must not change what the model says or how fast.

    git worktree add ../before <commit>
    PYTHONPATH=. python -m benchmarks.perf.before_after --before ../before [--repeats 3]

Each measurement runs in a fresh interpreter that imports the checkout it measures (``PYTHONPATH``),
earlier and current alternately, ``--repeats`` times each, with the default pair (SmolLM2-135M-Instruct,
LoRA at init, fp32):

* **step**: one MAGRPO step of :mod:`benchmarks.perf.trainer_step` (2 agents x G = 4, 128 new tokens
  each, sampled), after one warm-up step: its time, its rollout (generation) and its update (the loss
  pass and backward) apart;
* **greedy replies**: the turn-1 prompts of both agents, greedy, at most 128 new tokens, replies ending
  at their closing code fence (as the held-out evaluation decodes them), all in one ``generate`` call:
  each repeat a third of the prompts (``coop_procedural-v1`` level 1: the 120 test problems and the
  first 60 train draws, 360 prompts in all); the time, and whether each reply is the earlier one's;
* **TL;DR replies** (first repeat only, where the data is there): 100 ``tldr-v5`` test prompts of both
  agents, greedy, 128 new tokens.

The report gives each repeat's ratio (current / earlier), the median, and the share of identical replies.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.machine import code_version, uptime

RESULTS = Path(__file__).resolve().parents[1] / "results" / "before_after.md"
BAR = 1.05
_CHILD = r"""
import json, sys, tempfile, time, warnings
warnings.simplefilter("ignore")
part, repeat, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
import torch
import llm_coop_envs, trainers
from trainers.config import SamplingConfig
from trainers.generation.base import GenerationRequest
out = {"package": llm_coop_envs.__file__}
if part == "step":
    from benchmarks.perf.trainer_step import our_trainer, time_ours
    trainer = our_trainer(("helper", "main"), 128, tempfile.mkdtemp(prefix="before-after-"))
    torch.manual_seed(0)
    time_ours(trainer)  # warm-up
    out.update(time_ours(trainer))
else:
    from trainers.config import TrainConfig
    from trainers.generation.transformers_backend import TransformersBackend
    from trainers.policy import build_policies
    if part == "greedy":
        sampling = SamplingConfig(temperature=0.0, max_new_tokens=128, stop_after_code=True)
        problems = [("test", i) for i in range(120)] + [("train", i) for i in range(60)]
        problems = problems[repeat::repeats]
        envs = {split: llm_coop_envs.make("coop_procedural-v1", split=split, level=1) for split in ("test", "train")}
    else:
        sampling = SamplingConfig(temperature=0.0, max_new_tokens=128)
        problems = [("test", i) for i in range(100)]
        envs = {"test": llm_coop_envs.make("tldr-v5", split="test")}
    agents = tuple(envs["test"].possible_agents)
    cfg = TrainConfig(env="coop_procedural-v1", model="default", run_dir=tempfile.mkdtemp(prefix="before-after-"))
    backend = TransformersBackend(build_policies(agents, cfg), dtype="float32")
    requests, keys = [], []
    for split, index in problems:
        observations, _ = envs[split].reset(seed=0, options={"index": index})
        for agent in agents:
            requests.append(GenerationRequest(agent, observations[agent], 1, sampling))
            keys.append(f"{split}/{index}/{agent}")
    started = time.perf_counter()
    completions = backend.generate(requests)
    out["seconds"] = time.perf_counter() - started
    out["replies"] = dict(zip(keys, (c[0].text for c in completions)))
print("RESULT " + json.dumps(out))
"""


def run_child(checkout: Path, part: str, repeat: int, repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", _CHILD, part, str(repeat), str(repeats)], cwd=checkout, env=env,
                          capture_output=True, text=True)
    line = next((out for out in done.stdout.splitlines() if out.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"{part} in {checkout} failed:\n{done.stderr[-3000:]}")
    result = json.loads(line[len("RESULT "):])
    if not Path(result["package"]).resolve().is_relative_to(checkout.resolve()):
        raise RuntimeError(f"{checkout} ran another checkout's package: {result['package']}")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, type=Path, help="a checkout of the earlier commit")
    parser.add_argument("--current", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the checkout measured against it (default: this one; a worktree of a commit keeps "
                             "edits made during the run out of it)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-tldr", action="store_true")
    parser.add_argument("--only-tldr", action="store_true", help="only the TL;DR replies (one run each)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    checkouts = {"earlier": args.before.resolve(), "current": args.current.resolve()}
    load_start = uptime()
    rows: dict[str, list[tuple[float, float]]] = {"step": [], "rollout": [], "update": [], "greedy replies": []}
    same = {"greedy": [0, 0], "tldr": [0, 0]}
    tldr_times = None
    for repeat in range(0 if args.only_tldr else args.repeats):
        step = {name: run_child(path, "step", repeat, args.repeats) for name, path in checkouts.items()}
        for key, field in (("step", "step_s"), ("rollout", "rollout_s"), ("update", "update_s")):
            rows[key].append((step["earlier"][field], step["current"][field]))
        greedy = {name: run_child(path, "greedy", repeat, args.repeats) for name, path in checkouts.items()}
        rows["greedy replies"].append((greedy["earlier"]["seconds"], greedy["current"]["seconds"]))
        _count(same["greedy"], greedy)
        if repeat == 0 and not args.skip_tldr:
            try:
                tldr = {name: run_child(path, "tldr", 0, 1) for name, path in checkouts.items()}
            except RuntimeError as error:  # no TL;DR data here (LLM_COOP_DATA_DIR): the rest still runs
                print(f"TL;DR replies skipped: {str(error).splitlines()[-1][:300]}", flush=True)
            else:
                tldr_times = (tldr["earlier"]["seconds"], tldr["current"]["seconds"])
                _count(same["tldr"], tldr)
        print(f"repeat {repeat + 1}/{args.repeats}: " + ", ".join(
            f"{k} {v[-1][1] / v[-1][0]:.3f}x" for k, v in rows.items()), flush=True)
    if args.only_tldr:
        tldr = {name: run_child(path, "tldr", 0, 1) for name, path in checkouts.items()}
        tldr_times = (tldr["earlier"]["seconds"], tldr["current"]["seconds"])
        _count(same["tldr"], tldr)
        rows = {}
    text = _report(args, checkouts, rows, same, tldr_times, (load_start, uptime()))
    args.out.write_text(text, encoding="utf-8")
    print(text)


def _count(tally: list[int], results: dict) -> None:
    earlier, current = results["earlier"]["replies"], results["current"]["replies"]
    tally[0] += sum(current.get(key) == text for key, text in earlier.items())
    tally[1] += len(earlier)


def _commit(checkout: Path) -> str:
    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"


def _report(args, checkouts, rows, same, tldr_times, loads) -> str:
    lines = ["# This checkout against an earlier one, alternately in one run", "",
             "Command (repository root): `PYTHONPATH=. python -m benchmarks.perf.before_after --before <checkout of "
             f"{_commit(checkouts['earlier'])}> --current <checkout of {_commit(checkouts['current'])}>"
             + (f" --repeats {args.repeats}" if args.repeats != 3 else "")
             + (" --skip-tldr" if args.skip_tldr else "") + (" --only-tldr" if args.only_tldr else "") + "`", "",
             f"Code: earlier commit `{_commit(checkouts['earlier'])}`, current commit `{_commit(checkouts['current'])}`"
             + (f" (this checkout: {code_version()})" if checkouts["current"] == Path(__file__).resolve().parents[2] else "")
             + ".", "",
             f"Load: `{loads[0]}` at the start, `{loads[1]}` at the end.", "",
             f"Each row: seconds, earlier and current, medians over {args.repeats} repeats (a fresh process each, "
             f"alternately); the ratio is current / earlier within each repeat. Bar: each median ratio at most {BAR}x.",
             "", "| measurement | earlier s | current s | ratio, median | ratios | under the bar |",
             "|---|---:|---:|---:|---|---|"]
    for name, pairs in rows.items():
        ratios = [current / earlier for earlier, current in pairs]
        median = statistics.median(ratios)
        lines.append(f"| {name} | {statistics.median(e for e, _ in pairs):.2f} | "
                     f"{statistics.median(c for _, c in pairs):.2f} | {median:.3f}x | "
                     f"{', '.join(f'{r:.3f}' for r in ratios)} | {'yes' if median <= BAR else 'no'} |")
    if tldr_times is not None:
        lines.append(f"| TL;DR replies (one run) | {tldr_times[0]:.2f} | {tldr_times[1]:.2f} | "
                     f"{tldr_times[1] / tldr_times[0]:.3f}x | one run | - |")
    lines += ["", "Identical greedy replies, current against earlier:", ""]
    for name, (equal, total) in same.items():
        if total:
            label = "coop_procedural-v1 level 1 (turn-1 prompts of both agents)" if name == "greedy" else "tldr-v5 test"
            lines.append(f"* {label}: **{equal} of {total}** ({100 * equal / total:.1f} %)")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
