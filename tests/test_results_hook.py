"""The docs include measured figures from the results files instead of retyping them."""

import importlib.util
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "results_summary.py"


def _hook(results: Path):
    spec = importlib.util.spec_from_file_location("results_summary", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RESULTS = results
    return module


def test_a_summary_and_a_section_are_included_as_the_results_file_writes_them(tmp_path):
    (tmp_path / "x.md").write_text("# Title\n\nCommand: `run`\n\n| a |\n|---|\n| 1 |\n\n## Changes (mean)\n\n| b |\n|---|\n| +2 |\n\n## Other\n\nno\n")
    hook = _hook(tmp_path)
    page = hook.on_page_markdown("A\n<!-- results-summary: x.md -->\nB\n<!-- results-section: x.md | Changes -->\nC")
    assert page == "A\nCommand: `run`\n\n| a |\n|---|\n| 1 |\nB\n| b |\n|---|\n| +2 |\nC"


def test_a_missing_file_or_section_fails_the_build(tmp_path):
    (tmp_path / "x.md").write_text("# T\n\n## Changes\n\nbody\n")
    hook = _hook(tmp_path)
    with pytest.raises(ValueError, match="no section"):
        hook.on_page_markdown("<!-- results-section: x.md | Missing -->")
    with pytest.raises(ValueError, match="no results file"):
        hook.on_page_markdown("<!-- results-summary: y.md -->")


def test_an_image_beside_the_results_file_is_named_not_linked(tmp_path):
    results_summary = _hook(tmp_path)
    text = "before\n![training reward](training.png)\n![remote](https://example.org/x.png)"
    out = results_summary.local_images(text, "learning/coop_procedural-v0/results.md")
    assert "*Figure: training reward (`benchmarks/results/learning/coop_procedural-v0/training.png`).*" in out
    assert "![remote](https://example.org/x.png)" in out
