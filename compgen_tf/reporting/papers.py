"""The papers' published figures, read from the package data file `papers.json`.

The report (`compgen_tf.reporting.report`) sets each of these beside our results on the same
split. They are data, not code: adding a paper's number is an edit of
`compgen_tf/resources/papers.json`, whose `about` field describes its layout.

Example:
    >>> from compgen_tf.reporting.papers import PAPER_RESULTS
    >>> PAPER_RESULTS[("syntactic_attention", "addprim_jump")]["median"]
    91.0
"""

from __future__ import annotations

import json

from compgen_tf import resources

PAPERS_FILE = resources.path("papers.json")

# Keys a row of `results` may have besides its model and name; `paper`, `mean` and `source`
# are required.
_ROW_KEYS = ("paper", "variant", "mean", "std", "median", "n", "source")


def _load(path=PAPERS_FILE) -> dict:
    document = json.loads(path.read_text(encoding="utf-8"))
    papers = document["papers"]
    results = {}
    for index, row in enumerate(document["results"]):
        row = dict(row)
        key = (row.pop("model"), row.pop("name"))
        unknown = set(row) - set(_ROW_KEYS)
        missing = {"paper", "mean", "source"} - set(row)
        if unknown or missing or row["paper"] not in papers or key in results:
            raise ValueError(f"{path}: results[{index}] ({key[0]}/{key[1]}) must name one of "
                             f"the papers {sorted(papers)} once, with {list(_ROW_KEYS)} "
                             f"(unknown: {sorted(unknown)}, missing: {sorted(missing)})")
        results[key] = row
    rows = [tuple(row) for row in document["summary_rows"]]
    if not set(rows) <= set(results):
        raise ValueError(f"{path}: summary_rows without a paper figure: "
                         f"{sorted(set(rows) - set(results))}")
    return {"papers": papers, "results": results, "translation": document["translation"],
            "summary_rows": rows}


_DOCUMENT = _load()

# The papers, in the order of their tables: key -> (title, what the numbers are).
PAPERS = {key: (paper["title"], paper["explanation"])
          for key, paper in _DOCUMENT["papers"].items()}
# Each paper's name in the README's summary table.
SHORT_TITLES = {key: paper["short_title"] for key, paper in _DOCUMENT["papers"].items()}
# (model, results-file name) -> the paper's test accuracy in percent: mean, optional std,
# median and number of runs n, and where the number comes from (`source`).
PAPER_RESULTS = _DOCUMENT["results"]
# The English-French experiment of Russin et al. 2020 (Sec. 4): no number of ours is comparable
# with a figure of that paper's table, which our copy of the text does not have.
MT_TITLE = _DOCUMENT["translation"]["title"]
MT_EXPLANATION = _DOCUMENT["translation"]["explanation"]
# The README's results table: the headline row of each paper experiment (every row, with
# the variants and the reasons behind each provenance label, is in results/README.md).
SUMMARY_ROWS = _DOCUMENT["summary_rows"]


def paper_for(model: str, name: str) -> dict | None:
    """The paper figure of a results file: its own, or that of the split its `_rep<R>` data
    samples were drawn for; None when no paper reports one.

    Example:
        >>> paper_for("syntactic_attention", "addprim_jump_num1_rep3")["mean"]
        84.4
    """
    paper = PAPER_RESULTS.get((model, name))
    if paper is None and "_rep" in name:
        paper = PAPER_RESULTS.get((model, name.rsplit("_rep", 1)[0]))
    return paper
