"""The two levels about the source (from ``-v1`` on): grounding, then complementarity.

- **grounding** = on_source_band(on-source share of the two texts together) × coverage_band(share
  of the source the two texts cover together); it fails (scoring stops) when either factor is 0 or
  a text's own on-source share is below its floor (``min_text_on_source``). Text about another source, a
  generic template or text in another language has a low on-source share; a pair that names a few
  of the source's words and says nothing about the rest has a low coverage.
- **complementarity** = band(measure), where the measure says whether each text does its own part:
  ``added`` (TL;DR) is the share of the detailed text's source content that the short text lacks
  (a detailed summary that restates the TL;DR adds nothing); ``share_gap`` (arXiv) is the on-source
  share of the methods part minus that of the background part (the methods part reports what the
  abstract says, the background brings the context the abstract leaves out; swapped roles give a
  negative gap). Zero credit fails the level.

See :mod:`.grounding` for the measurements.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.thresholds import LevelConfig
from llm_coop_envs.writing.grounding import SourceProfile, added_coverage, coverage, on_source_share
from llm_coop_envs.writing.outcome import LevelOutcome


def grounding_level(
    roles, tokens: Sequence[Sequence[str]], profile: SourceProfile, config: LevelConfig, metrics: dict, source_name: str
) -> LevelOutcome:
    stems = [tm.content_stems(t) for t in tokens]
    shares = {role: on_source_share(s, profile) for role, s in zip(roles, stems)}
    joint = on_source_share(stems[0] | stems[1], profile)
    covered = coverage(stems[0] | stems[1], profile)
    metrics.update(
        on_source_share={**{r: round(v, 4) for r, v in shares.items()}, "joint": round(joint, 4)},
        source_coverage=round(covered, 4),
    )
    on_band, cov_band = config.on_source, config.coverage
    what = (
        f"{joint:.0%} of the texts' content words occur in the {source_name} (weighted by how specific they are; "
        f"{on_band.describe()}), they mention {covered:.0%} of the {source_name}'s content ({cov_band.describe()})"
    )
    off_topic = [
        f"the {role} text is not about this {source_name} (on-source share {shares[role]:.0%}, at least {floor:.0%} needed)"
        for role, floor in zip(roles, config.min_text_on_source)
        if shares[role] < floor
    ]
    if off_topic:
        why = "; ".join(off_topic)
    elif on_band.score(joint) == 0:
        why = f"the texts are not about this {source_name}"
    elif cov_band.score(covered) == 0:
        why = f"the texts cover too little of the {source_name}"
    else:
        score = on_band.score(joint) * cov_band.score(covered)
        hint = "" if score == 1.0 else f": write more about what the {source_name} itself says"
        return LevelOutcome("grounding", score, True, f"Grounding passed: {what}{hint}.")
    return LevelOutcome("grounding", 0.0, False, f"Grounding failed: {what}: {why}.")


def complementarity_level(
    roles, tokens: Sequence[Sequence[str]], profile: SourceProfile, config: LevelConfig, metrics: dict, source_name: str
) -> LevelOutcome:
    stems = [tm.content_stems(t) for t in tokens]
    band = config.complementarity
    if config.complementarity_measure == "added":
        value = added_coverage(stems[0], stems[1], profile)
        what = f"{value:.0%} of the {source_name} content in the {roles[1]} text is missing from the {roles[0]} text ({band.describe()})"
        advice = f"the {roles[1]} text should add what the {roles[0]} text leaves out, not restate it"
    else:
        shares = [on_source_share(s, profile) for s in stems]
        value = shares[1] - shares[0]
        what = (
            f"on-source share {roles[1]} {shares[1]:.0%} minus {roles[0]} {shares[0]:.0%} = {value:+.2f} ({band.describe()})"
        )
        advice = (
            f"the {roles[1]} text should report what the {source_name} says, the {roles[0]} text the context "
            f"the {source_name} leaves out"
        )
    metrics["complementarity"] = round(value, 4)
    score = band.score(value)
    if score > 0:
        hint = f": {advice}" if score < 1.0 else ""
        return LevelOutcome("complementarity", score, True, f"Complementarity passed: {what}{hint}.")
    return LevelOutcome("complementarity", 0.0, False, f"Complementarity failed: {what}: {advice}.")
