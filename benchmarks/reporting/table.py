"""The results as a markdown table: one row per method, the columns the papers report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def markdown_table(methods: Mapping[str, Mapping[str, Any]]) -> str:
    """Coding: pass@k, accuracy@k, cooperation, reward, tokens; writing: reward, ROUGE, ratios."""
    if not methods:
        return "(no results)\n"
    columns = _columns(methods)
    lines = ["| method | " + " | ".join(title for title, _ in columns) + " |", "| --- |" + " ---: |" * len(columns)]
    for label, summary in methods.items():
        lines.append(f"| {label} | " + " | ".join(_format(getter(summary)) for _, getter in columns) + " |")
    return "\n".join(lines) + "\n"


def sampling_line(methods: Mapping[str, Mapping[str, Any]]) -> str:
    """How the replies were drawn, from each method's provenance: greedy or the temperature and top-p
    (one phrase for all methods when they agree), and, when sampled, how to get the trainer's greedy numbers."""
    phrases = {label: _sampling_phrase((s.get("provenance") or {}).get("sampling")) for label, s in methods.items()}
    kinds = set(phrases.values())
    text = kinds.pop() if len(kinds) == 1 else "; ".join(f"{label}: {p}" for label, p in phrases.items())
    line = f"Sampling: {text}."
    if any(p.startswith("sampled") for p in phrases.values()):
        line += (" The trainer's held-out evaluation of a checkpoint is greedy with one episode per problem, "
                 "so its numbers differ; `--temperature 0 -n 1` gives them.")
    return line


def _sampling_phrase(sampling: Mapping[str, Any] | None) -> str:
    if not sampling:
        return "none (fixed replies, no model)"
    if not sampling.get("temperature"):
        return f"greedy (temperature 0), at most {sampling.get('max_new_tokens')} new tokens"
    return (f"sampled at temperature {sampling['temperature']}, top-p {sampling.get('top_p')}, "
            f"at most {sampling.get('max_new_tokens')} new tokens")


def _columns(methods: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, Any]]:
    first = next(iter(methods.values()))
    ks = list(first.get("pass_at_k", {}))
    columns: list[tuple[str, Any]] = []
    coding = any("accuracy_at_k" in s for s in methods.values())
    if coding:
        columns += [(f"pass@{k}", _percent("pass_at_k", k)) for k in ks]
        columns += [(f"acc@{k}", _percent("accuracy_at_k", k)) for k in ks]
        columns.append(("coop. rate", _percent_field("cooperation_rate")))
        if any("helper_dependent_rate" in s for s in methods.values()):
            columns.append(("solved needing helper", _percent_field("helper_dependent_rate")))
    columns.append(("solved [95 % CI]", _with_interval("solved_rate", percent=True)))
    columns.append(("reward [95 % CI]", _with_interval("reward", percent=False)))
    writing_keys = list(dict.fromkeys(k for s in methods.values() for k in s.get("writing", {})))
    columns += [(key, _writing(key)) for key in writing_keys]
    columns.append(("tokens/ep", lambda s: s["efficiency"]["tokens_per_episode"]))
    columns.append(("critical tokens/ep", lambda s: s["efficiency"]["critical_path_tokens_per_episode"]))
    columns.append(("gen. s/ep", lambda s: s["efficiency"]["generation_latency_s_per_episode"]))
    return columns


def _percent(field: str, k: str):
    return lambda s: _scaled(s.get(field, {}).get(k))


def _percent_field(field: str):
    return lambda s: _scaled(s.get(field))


def _with_interval(field: str, percent: bool):
    """The value and, where the summary has it, its 95 % interval over problems (``intervals``)."""
    def cell(summary: Mapping[str, Any]) -> Any:
        value, bounds = summary.get(field), (summary.get("intervals") or {}).get(field)
        if value is None or not bounds:
            return _scaled(value) if percent else value
        if percent:
            return f"{100 * value:.2f}% [{100 * bounds['low']:.1f}, {100 * bounds['high']:.1f}]"
        return f"{value:.3f} [{bounds['low']:.3f}, {bounds['high']:.3f}]"

    return cell


def _writing(key: str):
    return lambda s: s.get("writing", {}).get(key)


def _scaled(value: float | None) -> str | None:
    return None if value is None else f"{100 * value:.2f}%"


def _format(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def schemes_table(methods: Mapping[str, Mapping[str, Any]]) -> str:
    """Share of each cooperation scheme among solved joint replies, per method ('' if not coding)."""
    rows = {label: s["schemes_of_solved"] for label, s in methods.items() if s.get("schemes_of_solved")}
    if not rows:
        return ""
    schemes = list(next(iter(rows.values())))
    lines = ["| method | " + " | ".join(schemes) + " |", "| --- |" + " ---: |" * len(schemes)]
    for label, shares in rows.items():
        lines.append(f"| {label} | " + " | ".join(f"{100 * shares[s]:.1f}%" for s in schemes) + " |")
    return "\n".join(lines) + "\n"
