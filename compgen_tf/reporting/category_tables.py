"""Per-category tables of results files whose runs record `accuracy_by_category` (COGS).

One row per group of categories (COGS: in_distribution, lexical, structural), then per
category; one column per results file: exact match over its seeds (mean ± std, n). The
results README has one such table per results file that has categories; a docs page asks
for a table of several files with a `<!-- category-table: MODEL/NAME ... -->` ...
`<!-- category-table:end -->` block, which `python -m compgen_tf report` regenerates.
"""

from __future__ import annotations

import re

from compgen_tf.experiments.results import summarize
from compgen_tf.reporting.cells import percent
from compgen_tf.reporting.results_files import ReportError

CATEGORY_TABLE = re.compile(
    r"<!-- category-table: ([^>]*?) -->\n.*?<!-- category-table:end -->", re.DOTALL)
# The part whose categories a table shows: COGS's generalization set.
CATEGORY_PART = "gen"


def has_categories(entry: dict, part: str = CATEGORY_PART) -> bool:
    """Whether every run of a results entry records the categories of `part`."""
    return all(part in run.get("accuracy_by_category", {}) for run in entry["runs"])


def _cell(values) -> str:
    stats = summarize(values)
    spread = f" ± {percent(stats['std'])}" if stats["n"] > 1 else ""
    return f"{percent(stats['mean'])}{spread}"


def category_rows(entries, part: str = CATEGORY_PART) -> list[str]:
    """The Markdown table of `entries` ([(column label, results entry)]) on `part`.

    Args:
        entries: The columns, each a label and a results entry whose runs all have
            `accuracy_by_category[part]`.
        part: Which scored part's categories to show.

    Returns:
        The table's lines: header, "all" (the part's exact match), each group, each category.

    Raises:
        ReportError: Naming a results file whose runs lack the part's categories.
    """
    for label, entry in entries:
        if not has_categories(entry, part):
            raise ReportError(f"{entry.get('path', label)}: not every run records the "
                              f"categories of {part!r} (accuracy_by_category)")
    scores = [[run["accuracy_by_category"][part] for run in entry["runs"]]
              for _, entry in entries]
    groups = sorted({g for runs in scores for run in runs for g in run.get("groups", {})})
    categories = sorted({c for runs in scores for run in runs for c in run["categories"]})
    header = f"| {part} exact match (%) | " + " | ".join(
        f"{label} (n={len(entry['runs'])})" for label, entry in entries) + " |"
    lines = [header, "|---|" + "---|" * len(entries)]

    def row(name, pick):
        cells = []
        for runs in scores:
            values = [pick(run) for run in runs]
            cells.append("—" if None in values else _cell(values))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("**all**", lambda run: run["overall"])
    for group in groups:
        row(f"**{group}**", lambda run, g=group: run.get("groups", {}).get(g))
    for category in categories:
        row(category, lambda run, c=category: run["categories"].get(c))
    return lines


def render_category_tables(text: str, results: dict, results_link: str) -> str:
    """`text` (a docs page) with each category-table block regenerated from `results`
    (keyed by (model, name), as `read_results_dir` gives them)."""
    def table(match):
        entries = []
        for key in match.group(1).split():
            model, _, name = key.partition("/")
            if (model, name) not in results:
                raise ReportError(f"a category table names {key}, which has no results file")
            entry = results[(model, name)]
            entries.append((f"[{model} / {name}]({results_link}/{entry['path']})", entry))
        return "\n".join([match.group(0).split("\n", 1)[0], *category_rows(entries),
                          "<!-- category-table:end -->"])

    return CATEGORY_TABLE.sub(table, text)


def category_section(results: dict) -> list[str]:
    """The results README's section: one table per results file with categories."""
    keys = [key for key in sorted(results) if has_categories(results[key])]
    if not keys:
        return []
    lines = ["## By category", "",
             f"Exact match on each category of the `{CATEGORY_PART}` part (COGS's "
             "generalization set: 21 categories of 1,000 sentences; lexical and structural "
             "pool their categories' lines), mean ± std over seeds.", ""]
    for model, name in keys:
        entry = results[(model, name)]
        lines += [f"### {model} / {name}", "",
                  *category_rows([(f"[{name}]({entry['path']})", entry)]), ""]
    return lines
