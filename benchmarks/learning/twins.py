"""The bench report's line on held-out problems whose template a run trained on.

Each seed's runs train on the same draws (the draws depend on the seed and the budget, not on the
algorithm), so the share is given per seed: held-out problems (the evaluation's, by index) whose
number-masked first observations equal those of a problem the seed's runs drew
(:mod:`trainers.draws`). Computed from the bench's settings, not from its records; where the env
cannot be made here (its data absent), the report says so instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.learning.plan import Budget, RunSpec, run_settings


def twin_lines(meta: Mapping[str, Any], problems: int) -> list[str]:
    """One sentence per seed, or one saying why the share could not be computed."""
    from benchmarks.learning.evaluation import EVAL_SEED, eval_env_kwargs
    from trainers.config import load_config
    from trainers.draws import training_templates, twin_share

    budget = Budget.from_dict(meta["budget"])
    try:
        import warnings

        import llm_coop_envs

        warnings.simplefilter("ignore", FutureWarning)  # an old id's warning was shown when it ran
        lines, held_out = [], None
        for seed in meta["seeds"]:
            spec = RunSpec(meta["algorithms"][0], seed)
            overrides = [f"env={meta['env']}", f"steps={budget.steps}",
                         *run_settings(spec, meta["env"], budget, meta.get("overrides", []))]
            cfg = load_config(overrides=overrides)
            if held_out is None:
                held_out = llm_coop_envs.make(cfg.env, **eval_env_kwargs(cfg))
            twins, total = twin_share(held_out, range(problems), training_templates(cfg), seed=EVAL_SEED)
            draws = budget.steps * budget.problems_per_step
            lines.append(f"* seed {seed}: {twins}/{total} ({100 * twins / max(total, 1):.0f} %) of the held-out problems "
                         f"have a number-masked template twin among the seed's {draws} training draws")
        return lines
    except Exception as error:  # noqa: BLE001 -- a report of committed records must not need the env's data
        return [f"* not computed here ({type(error).__name__}: {error})"]
