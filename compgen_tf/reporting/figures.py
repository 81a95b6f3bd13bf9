"""Figures in prose, each checked against the results file it cites: `report --check` runs this.

A typed number drifts from its source when the source changes, when it is rounded by hand
(36.35 shown as 36.4), or when it is quoted from the wrong file. So every figure of the
documents (README.md, results/README.md, docs/**/*.md, serving/README.md) that reads as a
result must be a value of the file its own text cites, formatted with the decimals shown (a
fraction may be shown in percent: 0.3634 as 36.3% or 36.35%), or be marked as not ours.

What reads as a result:
- any number followed by `%`, and each number of a list that ends in `%`
  ("98.8 / 0.0 / 99.6%");
- a decimal number typed without `%` after a statistic or a score word ("median 53.5",
  "Mean 75.7", "std 40.4", "test 91.68"), beside `±`, or at either end of an en-dash range
  ("0.0–100.0").
Decimals elsewhere (timings, learning rates, versions) are not results and are not checked.

Which file a figure cites, searched in this order:
1. its unit: the table row, the list item (its marker line and continuation lines), the
   fenced code block, or else the sentence of a paragraph that holds it. Every citation in
   the unit counts, and the figure passes when any of those files holds it.
2. otherwise the citation nearest to it (in characters, either way) in the same section,
   the text between two headings of any level.
A citation is a Markdown link or a path typed in the text (`results/seq2seq/simple.json`,
relative to the repository root; a link is relative to its document) that names a JSON file
of the repository, or a directory under `results/` other than `results/` itself. A cited
directory cites every JSON file below it: a page that says "the files of
`results/syntactic_attention/`" means those files, and a figure it quotes must still be one
of theirs. `results/` as a whole, Markdown pages (results/README.md included) and plots are
not sources: a figure backed by "some file somewhere" is what this check exists to refuse.
A typed path may name a family of files, each of them cited: `<N>` stands for any part of a
name (`results/checks/length_oracle_seq2seq_length_dev_seed<N>.json`) and `{a,b}` for
either word (`addjump_dev_{run,walk}_seed0.json`). A file's own name typed without its
directory (`length.json`) is not a citation.

What a file holds: every number in it (validation curves included, versions not), and
the statistics the reports print of each per-seed field of its `runs` (mean, median, sample
std, min, max: the BLEU columns, for one, are not stored as a summary); where a unit cites
several files, also the statistics of their seeds pooled (the results README's pooled rows).

Marked as not ours to back, where no cited file holds the figure:
- a paper's figure: the word "paper" or "papers" (not "paper-regime", a configuration's
  name), "reports" or "reported" (not "report", also this project's command), or "Table"
  followed by a number, earlier in the same clause; or a table column whose header names the
  paper ("paper (test %)", "paper source"), unless the cell says "our" or "ours" before the
  figure. A clause ends at `.`, `;`, `:`, `!`, `?` followed by a space, at a table cell's
  `|`, at a list marker, at `(` and at a blank line.
- a goal: "goal", "target" or "aim" earlier in the same clause ("the issue's goal of 50%").
A figure a cited file holds passes whatever its marks; a figure that no cited file holds and
that has no mark is an error, named with its document, line and the files it cited.

Tables generated from the files (`report`) are the way to show a result; they cite their file
on every row, so the check follows them row by row like hand-typed ones.
"""

from __future__ import annotations

import bisect
import json
import re
from functools import lru_cache
from pathlib import Path

PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?%")
# Each member of a list that ends in `%` ("98.8 / 0.0 / 99.6%") is a percentage too.
PERCENT_LIST = re.compile(r"(?<![\w./])(\d+(?:\.\d+)?)(?=(?:\s?/\s?\d+(?:\.\d+)?)+\s?%)")
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
# Where a clause starts, for paper marks: a mark names the paper for what follows it there.
CLAUSE_START = re.compile(r"(?:[.;:!?]\s|\||^\s*[-*]\s|\(|\n\s*\n)", re.MULTILINE)
# "paper-regime" (a configuration's name) is not the paper.
PAPER_MARK = re.compile(r"\b(?:papers?(?![-\w])|reports\b|reported\b|Table\s+\d+\b)")
OURS = re.compile(r"\bours?\b", re.IGNORECASE)
# A goal is not a result: "the goal of 50%", "every seed above the goal's 95%".
GOAL_MARK = re.compile(r"\b(?:goal|target|aim)(?:'s|s)?\b")
# Versions are not figures. Validation curves are: a file's curves hold at most a few
# hundred values, few enough to quote one ("validation 98.5% at step 4,000") against.
SKIPPED_KEYS = {"versions"}

HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
FENCE = re.compile(r"^\s*```")
TABLE_ROW = re.compile(r"^\s*\|")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")
# A sentence of a paragraph ends at `.`, `!` or `?` followed by space and what starts a
# sentence ("e.g. the" and "et al. 2019" go on).
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(*`_\"'])")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A typed path may name a family of files: `seed<N>.json`, `addjump_dev_{run,walk}_...`.
TYPED_PATH = re.compile(r"(?<![\w/.\-])((?:\.\./)*results/(?:[\w.\-/]|<\w+>|\{[\w,]+\})*"
                        r"[\w/>}])")
PLACEHOLDER = re.compile(r"<\w+>")
ALTERNATIVES = re.compile(r"\{([\w,]+)\}")


def file_values(path: Path) -> list[float]:
    """Every number of the JSON file `path` (ints as ints), except its versions."""
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
            values.append(node)  # an int stays one: see `shown_forms`

    walk(json.loads(Path(path).read_text(encoding="utf-8")))
    return values


def shown_forms(values: list[float]) -> set[str]:
    """How each value may be typed: a fraction in percent or the value itself, with 0 to 2
    decimals. An integer (a seed, a step, a count) is typed as itself only: seed 1 is not
    100%, and seed 0 not 0.0."""
    forms = set()
    for value in values:
        if isinstance(value, int):
            forms.add(str(value))
            continue
        for number in (100.0 * value, value):
            for decimals in (0, 1, 2):
                forms.add(f"{number:.{decimals}f}")
    return forms


def run_columns(path: Path) -> dict[str, list[float]]:
    """The per-seed scores of the results file `path`: each field of its `runs` list that
    holds a float, across the runs ({} for a file without one); a field inside a mapping of
    a run (`accuracy_by_category`: part, then category) is a column of its own, its keys
    joined by dots."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    runs = document.get("runs") if isinstance(document, dict) else None
    columns: dict[str, list[float]] = {}

    def collect(mapping, prefix):
        for key, value in mapping.items():
            if isinstance(value, dict):
                collect(value, f"{prefix}{key}.")
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                columns.setdefault(f"{prefix}{key}", []).append(value)

    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, dict):
            collect(run, "")
    # Scores are floats; seeds, steps and counts (ints throughout) have no statistics here.
    return {key: [float(value) for value in column] for key, column in columns.items()
            if any(isinstance(value, float) for value in column)}


def statistics(values: list[float]) -> list[float]:
    """The statistics the reports print of per-seed `values`: mean, median, sample standard
    deviation (n - 1; none for one value), min and max."""
    if not values:
        return []
    ordered, count = sorted(values), len(values)
    mean = sum(ordered) / count
    middle = count // 2
    median = ordered[middle] if count % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    result = [mean, median, ordered[0], ordered[-1]]
    if count > 1:
        result.append((sum((v - mean) ** 2 for v in ordered) / (count - 1)) ** 0.5)
    return result


@lru_cache(maxsize=None)
def _file_forms(path: Path, modified: float) -> frozenset:
    # `modified` is part of the key so that a rewritten file is read again.
    derived = [stat for column in run_columns(path).values() for stat in statistics(column)]
    return frozenset(shown_forms(file_values(path) + derived))


def forms_of(sources) -> set[str]:
    """How the figures of the files `sources` may be typed: `shown_forms` of every value of
    each JSON file (a directory stands for every JSON file below it) and of the statistics of
    each per-seed field; and, when several files are cited together, of the statistics of
    their seeds pooled (as the results README's pooled rows show them)."""
    files = []
    for source in sources:
        files += sorted(source.rglob("*.json")) if source.is_dir() else [source]
    files = list(dict.fromkeys(files))
    forms: set[str] = set()
    for path in files:
        forms |= _file_forms(path, path.stat().st_mtime)
    if len(files) > 1:
        pooled: dict[str, list[float]] = {}
        for path in files:
            for key, column in run_columns(path).items():
                pooled.setdefault(key, []).extend(column)
        forms |= shown_forms([stat for column in pooled.values()
                              for stat in statistics(column)])
    return forms


def figures(text: str) -> list[tuple[int, str, int]]:
    """The figures of `text` that read as results: (position, figure as typed with `%` if it
    has one, end of the match), in the order of the text, each position once."""
    found = [(match.start(1), match.group(1) + "%", match.end())
             for pattern in (PERCENT, PERCENT_LIST) for match in pattern.finditer(text)]
    found += [(match.start(1), match.group(1), match.end())
              for pattern in STATISTICS for match in pattern.finditer(text)]
    result, seen = [], set()
    for position, figure, end in sorted(found):
        if position not in seen:
            seen.add(position)
            result.append((position, figure, end))
    return result


def units(text: str) -> list[tuple[int, int, str]]:
    """The citing units of `text`: (start, end, kind) of each table row, list item, fenced
    code block and paragraph sentence, in order; headings and blank lines are in none."""
    spans: list[tuple[int, int, str]] = []
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    index = 0

    def take_while(first, keep):
        last = first + 1
        while last < len(lines) and keep(lines[last]):
            last += 1
        return last

    while index < len(lines):
        line = lines[index]
        if not line.strip() or HEADING.match(line):
            index += 1
        elif FENCE.match(line):
            last = take_while(index, lambda later: not FENCE.match(later))
            last = min(last + 1, len(lines))  # the closing fence
            spans.append((starts[index], starts[last], "code block"))
            index = last
        elif TABLE_ROW.match(line):
            spans.append((starts[index], starts[index + 1], "table row"))
            index += 1
        elif LIST_ITEM.match(line):
            last = take_while(index, lambda later: later.strip() and not (
                LIST_ITEM.match(later) or HEADING.match(later) or FENCE.match(later)
                or TABLE_ROW.match(later)))
            spans.append((starts[index], starts[last], "list item"))
            index = last
        else:
            last = take_while(index, lambda later: later.strip() and not (
                LIST_ITEM.match(later) or HEADING.match(later) or FENCE.match(later)
                or TABLE_ROW.match(later)))
            paragraph_start, paragraph_end = starts[index], starts[last]
            cut = paragraph_start
            for end in SENTENCE_END.finditer(text, paragraph_start, paragraph_end):
                spans.append((cut, end.start(), "sentence"))
                cut = end.end()
            spans.append((cut, paragraph_end, "sentence"))
            index = last
    return spans


def citations(text: str, document: Path, repo: Path) -> list[tuple[int, int, Path]]:
    """The citations of `text` (the document at `document`): (start, end, source) of each
    link or typed path that names a JSON file of `repo` or a directory under its `results/`
    other than `results/` itself, in order."""
    repo = repo.resolve()
    results_root = repo / "results"
    found = []
    for pattern, bases in ((LINK, (document.resolve().parent,)),
                           (TYPED_PATH, (repo, document.resolve().parent))):
        for match in pattern.finditer(text):
            target = match.group(1).split("#")[0]
            if not target or "://" in target:
                continue
            if pattern is TYPED_PATH and (PLACEHOLDER.search(target)
                                          or ALTERNATIVES.search(target)):
                found += [(match.start(), match.end(), source)
                          for source in _family(target, repo)]
                continue
            for base in bases:
                source = (base / target).resolve()
                if not source.is_relative_to(repo):
                    continue
                if (source.is_file() and source.suffix == ".json") or (
                        source.is_dir() and source.is_relative_to(results_root)
                        and source != results_root):
                    found.append((match.start(), match.end(), source))
                    break
    return sorted(found, key=lambda item: item[:2])


def _family(target: str, repo: Path) -> list[Path]:
    """The JSON files of `repo` that the typed path `target` names, where `<N>` stands for
    any part of a name and `{a,b}` for either of its words."""
    patterns = [target]
    while any(ALTERNATIVES.search(pattern) for pattern in patterns):
        expanded = []
        for pattern in patterns:
            match = ALTERNATIVES.search(pattern)
            if match is None:
                expanded.append(pattern)
                continue
            expanded += [pattern[:match.start()] + word + pattern[match.end():]
                         for word in match.group(1).split(",")]
        patterns = expanded
    files = []
    for pattern in patterns:
        files += [path.resolve() for path in sorted(repo.glob(PLACEHOLDER.sub("*", pattern)))
                  if path.suffix == ".json" and path.is_file()]
    return list(dict.fromkeys(files))


def paper_marked(text: str, position: int) -> bool:
    """Whether the figure at `position` is marked as not ours to back: a paper's figure (a
    `PAPER_MARK` earlier in its clause, or in the header of its table column) or a goal (a
    `GOAL_MARK` earlier in its clause)."""
    starts = [m.end() for m in CLAUSE_START.finditer(text, 0, position)]
    clause = text[starts[-1] if starts else 0:position]
    if PAPER_MARK.search(clause) or GOAL_MARK.search(clause):
        return True
    # A paper's column marks its cells, but not a cell that says the figure is ours.
    cell_start = text.rfind("|", text.rfind("\n", 0, position) + 1, position) + 1
    return bool(PAPER_MARK.search(_column_header(text, position))
                and not OURS.search(text, cell_start, position))


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


def _name(path: Path, repo: Path) -> str:
    """`path` relative to `repo` where it is inside it, for messages."""
    path = Path(path).resolve()
    return str(path.relative_to(repo)) if path.is_relative_to(repo) else str(path)


def unbacked_figures(text: str, document: Path, repo: Path) -> list[str]:
    """The figures of `text` (the document at `document`, whose links are relative to it)
    that no file they cite holds and that are not marked as a paper's figure, each as
    "line N: FIGURE ..." saying which files were cited, in the order of the text."""
    repo = Path(repo).resolve()
    cited = citations(text, Path(document), repo)
    cited_starts = [start for start, _, _ in cited]
    spans = units(text)
    span_starts = [start for start, _, _ in spans]
    headings = [match.start() for match in HEADING.finditer(text)]
    problems = []
    for position, figure, end in figures(text):
        at = bisect.bisect_right(span_starts, position) - 1
        unit_start, unit_end, kind = spans[at] if at >= 0 and position < spans[at][1] else (
            position, end, "sentence")
        sources = [source for start, stop, source in cited
                   if start < unit_end and stop > unit_start]
        where = f"its {kind}"
        if not sources:
            section = bisect.bisect_right(headings, position)
            section_start = headings[section - 1] if section else 0
            section_end = headings[section] if section < len(headings) else len(text)
            first = bisect.bisect_left(cited_starts, section_start)
            in_section = [item for item in cited[first:] if item[1] <= section_end]
            if in_section:
                nearest = min(abs(start - position) if start > position
                              else abs(position - stop) for start, stop, _ in in_section)
                sources = [source for start, stop, source in in_section
                           if (start - position if start > position else position - stop)
                           == nearest]
                where = "the nearest citation in its section"
        if figure.rstrip("%") in forms_of(sources) or paper_marked(text, position):
            continue
        line = text.count("\n", 0, position) + 1
        context = " ".join(text[max(unit_start, position - 60):end].split())
        if sources:
            names = ", ".join(dict.fromkeys(_name(source, repo) for source in sources))
            problems.append(f"line {line}: {figure} is in none of {names} ({where}) "
                            f"in \"{context}\"")
        else:
            problems.append(f"line {line}: {figure} cites no results file (none in its "
                            f"{kind} or section) and is not marked as a paper's figure "
                            f"in \"{context}\"")
    return problems


def documents(repo: Path) -> list[Path]:
    """The documents whose typed figures are checked: README.md, results/README.md,
    docs/**/*.md and serving/README.md, those that exist."""
    repo = Path(repo)
    named = [repo / "README.md", repo / "results" / "README.md",
             *sorted((repo / "docs").rglob("*.md")), repo / "serving" / "README.md"]
    return [path for path in named if path.is_file()]


def check_documents(paths, results_dir: Path) -> list[str]:
    """`unbacked_figures` of each file of `paths`, as "PATH:LINE: ...", where the
    repository is the directory holding `results_dir`."""
    repo = Path(results_dir).resolve().parent
    problems = []
    for path in paths:
        name = _name(Path(path), repo)
        for problem in unbacked_figures(Path(path).read_text(encoding="utf-8"), Path(path),
                                        repo):
            line, _, rest = problem.partition(": ")
            problems.append(f"{name}:{line.removeprefix('line ')}: {rest}")
    return problems
