"""The README's measured figures are the results files' own.

A part of the README that links a results file under ``benchmarks/results/`` (a table row, or a paragraph
of prose) states figures measured there: every figure in it (a ratio such as ``0.67×``, a percentage, a
number of points, any decimal) must be written in one of the results files it links, digit for digit.
Only trivial formatting is normalised: ``×`` is ``x``, ``−`` is ``-``, and a space before ``%`` or a unit
is optional.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\((benchmarks/results/[^)#\s]+\.md)(?:#[^)]*)?\)")
FIGURE = re.compile(
    r"(?<![\w./-])[+-]?\d+(?:\.\d+)?(?:x(?![\w])|\s?%|\s(?:points|pts)\b)"  # 0.67x, 21.7 %, +36.5 points
    r"|(?<![\w./-])[+-]?\d+\.\d+(?![\d.]*\w)"  # any other decimal: 14.7 (s), 0.51 (–0.76x)
)


def normalise(text: str) -> str:
    return text.replace("×", "x").replace("−", "-").replace("\u202f", " ").replace("\xa0", " ")


def figures(text: str) -> list[str]:
    return [match.group(0) for match in FIGURE.finditer(normalise(text))]


def written_in(figure: str, text: str) -> bool:
    """Whether ``figure`` is in ``text`` as a figure of its own (not the tail or head of a longer number)."""
    number = re.match(r"[+-]?\d+(?:\.\d+)?", figure).group(0)
    unit = figure[len(number):].strip()
    sign = r"(?<![\d.+-])" if number[0] in "+-" else r"(?<![\d.])"
    pattern = sign + re.escape(number) + (r"\s?" + re.escape(unit) if unit else "") + r"(?![\d]|\.\d)"
    return re.search(pattern, normalise(text)) is not None


def parts(readme: str) -> list[tuple[int, str]]:
    """The README's table rows, one each, and its paragraphs of prose, as (first line number, text)."""
    found, paragraph, start, in_code = [], [], 0, False
    for number, line in enumerate(readme.splitlines(), start=1):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            line = ""  # code is not prose: it ends a paragraph and is not read
        if line.startswith("|"):
            found.append((number, line))
        if line.strip() and not line.startswith(("|", "#", "```")):
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            found.append((start, "\n".join(paragraph)))
        paragraph = []
    if paragraph:
        found.append((start, "\n".join(paragraph)))
    return found


def disagreements(readme: str, root: Path = ROOT) -> list[str]:
    """One line per figure that a README part states and none of the results files it links holds."""
    problems = []
    for number, text in parts(readme):
        linked = sorted(set(LINK.findall(text)))
        if not linked:
            continue
        missing_files = [name for name in linked if not (root / name).is_file()]
        problems += [f"README.md:{number} links {name}, which does not exist" for name in missing_files]
        sources = "\n".join((root / name).read_text(encoding="utf-8") for name in linked if name not in missing_files)
        for figure in figures(text):
            if not written_in(figure, sources):
                problems.append(f"README.md:{number}: {figure!r} is not written in {', '.join(linked)}")
    return problems


def test_every_readme_figure_is_written_in_the_results_file_it_links():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    checked = [text for _, text in parts(readme) if LINK.search(text)]
    assert len(checked) >= 8  # the table's rows and the learning paragraph
    problems = disagreements(readme)
    assert not problems, "\n".join(problems)


def test_a_figure_missing_from_its_file_is_reported(tmp_path):
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "step.md").write_text("ours / TRL: **0.72x (0.64–0.77x)**, 19.34 s vs 26.68 s; +36.5 points\n")
    good = "| step | 0.72× (0.64–0.77×; 19.34 s vs 26.68 s), +36.5 points | [`step.md`](benchmarks/results/step.md) |\n"
    assert disagreements(good, tmp_path) == []
    bad = "| step | 0.67× the time (14.7 s), 36.5 % | [`step.md`](benchmarks/results/step.md) |\n"
    assert disagreements(bad, tmp_path) == [
        "README.md:1: '0.67x' is not written in benchmarks/results/step.md",
        "README.md:1: '14.7' is not written in benchmarks/results/step.md",
        "README.md:1: '36.5 %' is not written in benchmarks/results/step.md",
    ]
    # a figure is not found inside a longer number, nor with another sign
    assert disagreements("| a | 0.7× and -36.5 points | [s](benchmarks/results/step.md) |\n", tmp_path) == [
        "README.md:1: '0.7x' is not written in benchmarks/results/step.md",
        "README.md:1: '-36.5 points' is not written in benchmarks/results/step.md",
    ]
    prose = "A paragraph: the step took 0.99× the time,\nsee [the file](benchmarks/results/step.md).\n"
    assert disagreements(prose, tmp_path) == ["README.md:1: '0.99x' is not written in benchmarks/results/step.md"]
    assert disagreements("| a | 1.0× | [s](benchmarks/results/gone.md) |\n", tmp_path) == [
        "README.md:1 links benchmarks/results/gone.md, which does not exist",
        "README.md:1: '1.0x' is not written in benchmarks/results/gone.md",
    ]
