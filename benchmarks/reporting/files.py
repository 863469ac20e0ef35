"""Write one evaluation's files: results.json, episodes.jsonl, results.md and the pass@k plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.reporting.plots import plot_pass_at_k
from benchmarks.reporting.table import markdown_table, sampling_line, schemes_table


REPORT_FILES = ("results.json", "results.md", "episodes.jsonl", "pass_at_k.png")
"""What :func:`write_report` writes in its folder (``llm-coop eval --overwrite`` replaces exactly these)."""


def write_report(results: dict[str, Any], out_dir: str | Path, command: str = "") -> dict[str, Path]:
    """Write the files under ``out_dir``; returns their paths by kind."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in results.items() if k != "episodes"} | {"command": command}
    paths = {"json": out / "results.json", "episodes": out / "episodes.jsonl", "markdown": out / "results.md"}
    paths["json"].write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    with paths["episodes"].open("w", encoding="utf-8") as handle:
        for episode in results.get("episodes", []):
            handle.write(json.dumps(episode, default=str) + "\n")
    plot = plot_pass_at_k(results["methods"], out / "pass_at_k.png", title=results["config"]["env"])
    if plot is not None:
        paths["pass_at_k_plot"] = plot
    paths["markdown"].write_text(_markdown(results, command, plot is not None), encoding="utf-8")
    return paths


def _markdown(results: dict[str, Any], command: str, has_plot: bool) -> str:
    config, machine = results["config"], results["machine"]
    problems = len(config.get("task_ids", []))
    parts = [
        f"# Evaluation on {config['env']}\n",
        f"{problems} problems × {config['n']} samples; env kwargs `{config['env_kwargs']}`.\n",
        markdown_table(results["methods"]),
        sampling_line(results["methods"]) + "\n",
    ]
    schemes = schemes_table(results["methods"])
    if schemes:
        parts += ["\nCooperation schemes among solved joint replies:\n", schemes]
    if has_plot:
        parts.append("\n![pass@k](pass_at_k.png)\n")
    parts.append(f"\nCommand: `{command or '(Python API)'}`  \nMachine: {machine}\n")
    return "\n".join(parts)
