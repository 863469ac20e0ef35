"""The bench's held-out evaluation: greedy episodes, one full record per problem.

The bench evaluates, not the trainer (whose runs get ``eval_problems=0``), for two reasons:

* a record keeps what a reader needs to recompute and question the table: every reply, the reward
  components, solved, the share of tests passed, and whether main's code called the helper;
* the untrained team is evaluated **once per setting** (model, env id + held-out kwargs, team, greedy
  sampling, problems) and reused by every seed and algorithm of that team, instead of once per run.

Trained weights are read from the run's checkpoints (the bench saves one every ``eval_every`` steps),
so the curves' points are evaluated the same way as the table's endpoints.

    python -m benchmarks.learning.evaluation untrained --problems 40 OUT.jsonl env=coop_basics-v0 model=default ...
    python -m benchmarks.learning.evaluation run RUN_DIR --problems 40
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

EVAL_SEED = 0
"""Every evaluation resets with this seed, whatever the run's seed: the untrained team is then one
evaluation for all runs, and trained and untrained are scored on the same episodes."""
RECORDS_FOLDER = "bench_eval"
"""``<run>/bench_eval/step_NNNNN.jsonl``, one per evaluated checkpoint; ``setting.json`` is written last."""
DONE_FILE = "setting.json"


def eval_env_kwargs(cfg: Any) -> dict[str, Any]:
    """The held-out env's kwargs: ``eval_env_kwargs``, else the training kwargs with ``split="test"``
    and **every level kept**: training narrowed to some levels (``env_kwargs.tier=1``) never narrows
    the held-out evaluation behind the reader's back."""
    import llm_coop_envs
    from trainers.config import explicit_held_out_kwargs, held_out_kwargs

    if cfg.eval_env_kwargs is not None:
        return explicit_held_out_kwargs(cfg)
    if not llm_coop_envs.spec(cfg.env).accepts("split"):
        raise ValueError(f"{cfg.env} takes no split: give eval_env_kwargs (e.g. a held-out data_path) "
                         "so the bench does not evaluate on the training problems")
    return held_out_kwargs(cfg.env_kwargs)


def setting(cfg: Any, problems: int) -> dict[str, Any]:
    """What determines an untrained evaluation: two runs with the same setting share one."""
    import llm_coop_envs

    kwargs = eval_env_kwargs(cfg)
    agents = llm_coop_envs.make(cfg.env, **kwargs).possible_agents
    sampling = {agent: {**dataclasses.asdict(cfg.sampling_for(agent)), "temperature": 0.0} for agent in agents}
    return {"model": cfg.model, "agent_models": dict(cfg.agent_models), "env": cfg.env, "env_kwargs": kwargs,
            "agents": list(agents), "sampling": _jsonable(sampling), "problems": problems, "seed": EVAL_SEED}


def setting_key(value: Mapping[str, Any]) -> str:
    """A short stable name for a setting (the untrained cache's file name)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def record(episode: Any) -> dict[str, Any]:
    """One problem's record: the final step's verdict and every reply of the episode."""
    from llm_coop_envs.coding.dependence import solved_needing_helper

    final = episode.final
    info = final.info if final is not None else {}
    details = info.get("details") if isinstance(info.get("details"), Mapping) else {}
    components = {k: float(v) for k, v in (info.get("reward_components") or {}).items() if isinstance(v, (int, float))}
    use = details.get("helper_use") if isinstance(details.get("helper_use"), Mapping) else None
    return {
        "task_id": episode.task_id,
        "reward": float(final.joint_reward) if final is not None else 0.0,
        "solved": bool(info.get("solved", False)),
        "tests_passed": float(details["passed"]) / details["total"] if details.get("total") else None,
        # The reward's cooperation component (paid only once a test passes) ...
        "uses_helper": None if "uses_helper" not in components else components["uses_helper"] > 0,
        # ... solved with main needing the helper (the counterfactual check; None under older rules) ...
        "helper_needed": solved_needing_helper(info),
        # ... and whether main's code called the helper at all, paid or not.
        "main_calls_helper": None if use is None else bool(use.get("calls_helper")),
        "components": components,
        "replies": [{agent: getattr(reply, "text", reply) for agent, reply in step.replies.items()}
                    for step in episode.steps],
    }


def play(env: Any, backend: Any, cfg: Any, problems: int) -> list[dict[str, Any]]:
    """Problems 0..n-1 of the held-out ``env``, one greedy episode each, all generations batched (the
    trainer's :func:`~trainers.evaluate.play_greedy`, reset with ``EVAL_SEED``), one record each."""
    from trainers.evaluate import play_greedy

    return [record(episode) for episode in play_greedy(env, backend, cfg, problems, seed=EVAL_SEED, batched=True)]


# ---------------------------------------------------------------- the two evaluations


def evaluate_untrained(out: Path, problems: int, overrides: Sequence[str]) -> Path:
    """The untrained team of the config ``overrides`` describe (fresh LoRA adapters are the base model)."""
    import llm_coop_envs
    from trainers.config import load_config
    from trainers.generation import backend_from_config
    from trainers.policy import build_policies

    cfg = load_config(overrides=list(overrides))
    value = setting(cfg, problems)
    env = llm_coop_envs.make(cfg.env, **value["env_kwargs"])
    policies = build_policies(tuple(env.possible_agents), cfg)
    records = play(env, backend_from_config(cfg, policies), cfg, problems)
    write_records(out, records)
    return out


def records_folder(eval_set: str | None = None) -> str:
    """A run's records folder of the main held-out set (``bench_eval``) or of an extra one (``bench_eval-<name>``)."""
    return RECORDS_FOLDER if eval_set is None else f"{RECORDS_FOLDER}-{eval_set}"


def evaluate_run(run_dir: Path, problems: int, eval_set: str | None = None,
                 env_kwargs: Mapping[str, Any] | None = None) -> list[Path]:
    """Every checkpoint of a finished run (step > 0), written to ``<run>/bench_eval/`` (or, for an
    extra held-out set whose env kwargs replace the run's ``eval_env_kwargs``, ``bench_eval-<set>/``)."""
    import llm_coop_envs
    from trainers.checkpoint import CHECKPOINTS, PREFIX
    from trainers.generation import backend_from_config
    from trainers.loading import load_policies

    folder = run_dir / records_folder(eval_set)
    folder.mkdir(parents=True, exist_ok=True)
    written, value = [], None
    finished = (p for p in (run_dir / CHECKPOINTS).glob(f"{PREFIX}*") if p.is_dir() and "." not in p.name)
    for checkpoint in sorted(finished):  # a name with a dot is a checkpoint still being written
        loaded = load_policies(checkpoint)
        if loaded.step == 0:
            continue  # step 0 is the untrained team, evaluated once for every run
        config = loaded.config if env_kwargs is None else dataclasses.replace(loaded.config, eval_env_kwargs=dict(env_kwargs))
        value = setting(config, problems)
        env = llm_coop_envs.make(config.env, **value["env_kwargs"])
        records = play(env, backend_from_config(config, loaded.policies), config, problems)
        written.append(write_records(folder / f"step_{loaded.step:05d}.jsonl", records))
    if value is None:
        raise FileNotFoundError(f"{run_dir} has no checkpoint after step 0 to evaluate")
    (folder / DONE_FILE).write_text(json.dumps(value, indent=2), encoding="utf-8")
    return written


def write_records(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")  # a reader never sees half a file
    partial.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    partial.replace(path)
    return path


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: list(v) if isinstance(v, tuple) else str(v)))


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning.evaluation", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    untrained = commands.add_parser("untrained", help="evaluate the untrained team of a config")
    untrained.add_argument("out", type=Path)
    untrained.add_argument("--problems", type=int, required=True)
    untrained.add_argument("overrides", nargs="*", help="trainer key=value settings")
    run = commands.add_parser("run", help="evaluate every checkpoint of a finished run")
    run.add_argument("run_dir", type=Path)
    run.add_argument("--problems", type=int, required=True)
    run.add_argument("--eval-set", help="name of an extra held-out set (records go to bench_eval-<name>/)")
    run.add_argument("--env-kwargs", type=json.loads, help="that set's held-out env kwargs, as JSON")
    args = parser.parse_args(list(argv))
    if args.command == "untrained":
        evaluate_untrained(args.out, args.problems, args.overrides)
    else:
        if (args.eval_set is None) != (args.env_kwargs is None):
            parser.error("--eval-set and --env-kwargs go together")
        evaluate_run(args.run_dir, args.problems, args.eval_set, args.env_kwargs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
