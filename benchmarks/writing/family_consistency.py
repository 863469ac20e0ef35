"""Does the claim check find a hostile family? Each family through the env's own consistency level, no model.

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.family_consistency tldr-v5 [--family NAME]

For every source of the hostile table (:mod:`.hostile`) and every family, the pair is normalised and gated
as ``env.step`` does (:func:`~llm_coop_envs.writing.chain.gated`); a pair that passes its gates gets the
consistency level (:func:`~llm_coop_envs.writing.chain.consistency_level`). Prints, per family, each
source's (consistency score, contradicted claims), or ``gate`` where a gate stops the pair first: the
contradictions a family adds over the genuine pair's are what the check found. With ``--family`` it also
prints the contradictions found.
"""

from __future__ import annotations

import argparse
import warnings

from benchmarks.writing import hostile
from llm_coop_envs.writing import chain


def family_consistency(env_id: str, family: str | None = None, show=print) -> dict[str, list]:
    import llm_coop_envs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        env = llm_coop_envs.make(env_id, split="all")
    task, kind = env.task, "tldr" if env_id.startswith("tldr") else "arxiv"
    index = {task.task_id(i): i for i in range(len(task))}
    rows: dict[str, list] = {}
    for task_id, case in hostile.cases(kind, task):
        pairs = {"genuine": case.genuine}
        pairs.update({name: make(case) for name, make in hostile.FAMILIES.items()
                      if hostile.ONLY.get(name, kind) == kind and family in (None, name)})
        for name, pair in pairs.items():
            if pair is None:
                continue
            found = chain.gated(task.pair(index[task_id], dict(zip(task.agents, pair))), task.config)
            if found.failed() is not None:
                rows.setdefault(name, []).append("gate")
                continue
            metrics: dict = {}
            outcome = chain.consistency_level(found.pair, task.config, metrics)
            rows.setdefault(name, []).append((round(outcome.score, 2), metrics["claims"]["counts"]["contradicted"]))
            if name == family:
                show(f"{task_id}: {metrics['claims']['contradicted'][:4]}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env")
    parser.add_argument("--family", help="one family (and print what was found)")
    args = parser.parse_args()
    for name, row in family_consistency(args.env, args.family).items():
        print(f"{name:34s} {row}")


if __name__ == "__main__":
    main()
