"""Figures in prose, checked against the committed files: `report --check` runs this.

A typed number drifts from its source when the source changes or when it is rounded by hand
(36.35 shown as 36.4). Every figure of the README and of `docs/` that reads as a result must
therefore either be a value of a committed JSON file under `results/` (a fraction shown in
percent, or a number the file holds in percent), formatted with the decimals shown, or be
marked as a paper's figure: the word "paper" (or "Table", "reports") earlier in the same
sentence, or a table column whose header names the paper. A figure that reads as a result is
- any number followed by `%`;
- a decimal number typed without `%` after a statistic or a score word ("median 53.5",
  "Mean 75.7", "std 40.4", "test 91.68"), beside `±`, or at either end of a range
  ("0.0–100.0").
Decimals elsewhere (timings, learning rates, versions) are not results and are not checked.

The check is permissive: a number counts as backed when any committed value formats the same
way, so it catches figures that no file holds and hand-rounding that lands on a value no file
has (36.35 shown as 36.4), not a figure quoted from the wrong file; and a sentence that names
the paper exempts every percentage after that word. Tables generated from the files
(`report`) are the way to show a result; this guards the prose around them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?%")
# Decimals typed without `%` that read as results: after a statistic or score word (any
# case), on either side of `±`, or as either end of an en-dash range ("0.0–97.1"; a hyphen
# joins versions and timings too often to count). A `%` after the number is PERCENT's.
# Separate patterns, since one figure can be several ("max 0.0–97.1").
NOT_PERCENT = r"(?!\d|\.\d|\s?%)"
STATISTICS = (
    re.compile(r"\b(?:mean|median|std|min|max|average|accuracy|exact match|BLEU|scores?|"
               r"scored|test|validation)\b(?:\s|:|=|of|is|was|at|on){0,12}?(?<![\w.])"
               r"(\d+\.\d+)" + NOT_PERCENT, re.IGNORECASE),
    re.compile(r"(?<![\w.])(\d+\.\d+)\s?±"),
    re.compile(r"±\s?(\d+\.\d+)" + NOT_PERCENT),
    re.compile(r"(?<![\w.])(\d+\.\d+)\s?–\s?(?=\d+\.\d+)"),
    re.compile(r"(?:(?<=\d–)|(?<=\d –)|(?<=\d– )|(?<=\d – ))(\d+\.\d+)" + NOT_PERCENT),
)
# Where a sentence (or a table cell, or a list item) starts: what "the same sentence" means.
SENTENCE_START = re.compile(r"(?:[.;:!?]\s|\||^\s*[-*]\s|\(|\n\s*\n)")
PAPER_MARK = re.compile(r"\b(?:paper|papers|Table|reports?|reported)\b")
# Per-step curves hold thousands of values: any typed number would match one of them.
SKIPPED_KEYS = {"validation_curve", "versions"}


def committed_values(results_dir: Path) -> list[float]:
    """Every number of every JSON file under `results_dir`, except per-step curves."""
    values: list[float] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key not in SKIPPED_KEYS:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            values.append(float(node))

    for path in sorted(Path(results_dir).rglob("*.json")):
        walk(json.loads(path.read_text()))
    return values


def shown_forms(values: list[float]) -> set[str]:
    """How each value may appear before a `%`: as a fraction in percent or as itself, with
    0 to 2 decimals."""
    forms = set()
    for value in values:
        for number in (100.0 * value, value):
            for decimals in (0, 1, 2):
                forms.add(f"{number:.{decimals}f}")
    return forms


def unbacked_figures(text: str, forms: set[str]) -> list[str]:
    """The figures of `text` (`N%`, and the decimals of `STATISTICS`) that are neither in
    `forms` nor marked as a paper's figure, each with its line number and sentence, in the
    order of the text."""
    found = [(match.start(1), match.group(1) + "%", match)
             for match in PERCENT.finditer(text)]
    found += [(match.start(1), match.group(1), match)
              for pattern in STATISTICS for match in pattern.finditer(text)]
    problems, seen = [], set()
    for position, figure, match in sorted(found, key=lambda item: item[0]):
        if position in seen:
            continue
        seen.add(position)
        if figure.rstrip("%") in forms:
            continue
        starts = [m.end() for m in SENTENCE_START.finditer(text, 0, match.start())]
        sentence = text[starts[-1] if starts else 0:match.end()]
        if PAPER_MARK.search(sentence) or PAPER_MARK.search(_column_header(text, position)):
            continue
        line = text.count("\n", 0, position) + 1
        problems.append(f"line {line}: {figure} in \"{' '.join(sentence.split())[-90:]}\"")
    return problems


def _column_header(text: str, position: int) -> str:
    """The header of the Markdown table column that `position` is in ("" outside tables)."""
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    if not line.lstrip().startswith("|"):
        return ""
    column = text.count("|", line_start, position)
    lines = text[:line_start].split("\n")[:-1]
    header = None
    while lines and lines[-1].lstrip().startswith("|"):  # up to the table's first line
        header = lines.pop()
    cells = header.split("|") if header else []
    return cells[column] if column < len(cells) else ""


def check_documents(paths, results_dir: Path) -> list[str]:
    """`unbacked_figures` of each file, prefixed with its path."""
    forms = shown_forms(committed_values(results_dir))
    return [f"{path}: {problem}" for path in paths
            for problem in unbacked_figures(Path(path).read_text(), forms)]
