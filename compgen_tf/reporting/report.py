"""The results report: `results/README.md`, its plots, the project README's results table and
the docs' results tables, generated from a results directory (`python -m compgen_tf report`,
`compgen_tf.cli.report`).

Reads every `*.json` file of the results directory that has `runs` (the schema of
`compgen_tf.experiments.results`, `compgen_tf.reporting.results_files`) and writes one table
per paper, the paper's test accuracy beside ours on the same split (`PAPER_RESULTS`, package
data read by `compgen_tf.reporting.papers`; a split without results of ours shows "—"), then
any other results, then the benchmark files of `benchmarks/` in a "Speed" section. Results files whose runs record
exact match by category (COGS) also get a per-category table ("By category",
`compgen_tf.reporting.category_tables`), which docs pages can ask for too. Plots go
to `plots/` next to the README (`compgen_tf.reporting.report_plots`): the per-seed test
accuracies of every results file with at least two runs, and validation accuracy against
training step for the seeds whose curve is known: from their run directories
(`RUNS/<model>/<name>/seed<N>/history.jsonl`) when they are on this machine, else from the
`validation_curve` the results file recorded.

Each row carries its results file's provenance label (faithful / closest to the paper /
variant chosen on validation / variant chosen after test scores were seen) and reason, and the
benchmark knowledge its recorded configuration encodes (`compgen_tf.experiments.knowledge`); its
`n` says how many of the seeds trained on JAX, when some did ("3 (2 on JAX)"). The project README's
results table (between its `results-summary` markers) is generated from the same files.

The output is deterministic (no dates, sorted inputs, PNGs without metadata):
regenerating without new results rewrites identical files. Every path is the caller's: this
module writes only the files it is given. A malformed results file stops the report with a
`ReportError` naming it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from compgen_tf.reporting.category_tables import category_section, render_category_tables
from compgen_tf.reporting.cells import (code_cell, knowledge_cell, number_cells, our_cells,
                                        paper_cell, percent, provenance_cell, scalar,
                                        split_cell)
from compgen_tf.reporting.figures import check_documents, documents
from compgen_tf.reporting.papers import (MT_EXPLANATION, MT_TITLE, PAPER_RESULTS, PAPERS,
                                         SHORT_TITLES, SUMMARY_ROWS, paper_for)
from compgen_tf.reporting.report_plots import (plot_curves, plot_seeds,
                                               plot_translation_curves, run_curves,
                                               translation_curves)
from compgen_tf.reporting.results_files import (BENCHMARKS, ReportError, pooled_entry,
                                                read_results_dir)

__all__ = ["GENERATOR", "PAPER_RESULTS", "ReportError", "build_report", "render_doc_tables",
           "render_report", "render_summary", "stale_reports", "with_summary"]

GENERATOR = "python -m compgen_tf report"
PLOTS = "plots"
SUMMARY_START = "<!-- results-summary:start -->"
SUMMARY_END = "<!-- results-summary:end -->"
MT_HEADER = ("| model | split | BLEU: mean ± std | median | min–max | BLEU, authors' way: "
             "mean ± std | median | min–max | exact match (%) | daxy x/8 per seed "
             "| best step / steps per seed | n | wall time / run | provenance |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
# A run whose kept model is from its last tenth of updates may not have converged.
LATE_BEST = 0.9


def converged(run: dict) -> bool | None:
    """Whether a run's kept model is from before the last tenth of its updates (None when
    the run does not record its best step)."""
    if run.get("best_step") is None or not run.get("steps"):
        return None
    return run["best_step"] <= LATE_BEST * run["steps"]


def _best_step_cell(runs) -> str:
    cells = []
    for run in runs:
        if converged(run) is None:
            cells.append("—")
        else:
            cells.append(f"{run['best_step']:,}/{run['steps']:,}"
                         + ("" if converged(run) else " (late)"))
    return ", ".join(cells)


def is_translation(entry: dict) -> bool:
    """Whether a results entry is of the English-French set (`tfds_scan.mt`'s configs)."""
    from tfds_scan.mt import CONFIG_NAMES

    return entry.get("split") in CONFIG_NAMES


def _translation_row(model: str, name: str, entry: dict) -> str:
    runs = entry["runs"]
    missing = [field for field in ("test_bleu", "test_bleu_authors", "daxy_exact")
               if any(field not in run for run in runs)]
    if missing:
        raise ReportError(f"malformed results file {entry['path']}: a translation results "
                          f"file needs {missing} in every run")
    cells = [model, split_cell(name, entry),
             *number_cells([run["test_bleu"] for run in runs]),
             *number_cells([run["test_bleu_authors"] for run in runs]),
             our_cells(entry)[0],
             ", ".join(f"{run['daxy_exact']}/8" for run in runs), _best_step_cell(runs),
             our_cells(entry)[3] + code_cell(entry, short=True), our_cells(entry)[4],
             provenance_cell(entry)]
    return "| " + " | ".join(cells) + " |"


def _translation_section(results: dict, used: set) -> list[str]:
    keys = [key for key in sorted(results) if is_translation(results[key])]
    lines = [f"## {MT_TITLE}", "", MT_EXPLANATION, ""]
    if not keys:
        return lines + ["No results yet.", ""]
    used.update(keys)
    lines += [MT_HEADER] + [_translation_row(*key, results[key]) for key in keys] + [""]
    lines += ["\"(late)\": the kept model (best validation BLEU) is from the run's last "
              "tenth of updates, so the run may have stopped before it converged.", ""]
    for key in keys:
        lines += _daxy_table(*key, results[key])
    return lines


def _daxy_table(model: str, name: str, entry: dict) -> list[str]:
    """Each seed's translation of the 8 daxy sentences, exact ones in bold."""
    from tfds_scan import mt

    runs = [run for run in entry["runs"] if "daxy_translations" in run]
    if not runs:
        return []
    pairs = mt.mt_examples(entry["split"])["daxy"]
    lines = [f"### {model} / {name}: the daxy sentences", "",
             "| source | reference | " + " | ".join(f"seed {run['seed']}" for run in runs)
             + " |", "|---|---|" + "---|" * len(runs)]
    for index, (source, reference) in enumerate(pairs):
        said = [run["daxy_translations"][index] for run in runs]
        lines.append("| " + " | ".join([source, reference] + [
            f"**{text}**" if text == reference else (text or "(empty)") for text in said])
            + " |")
    return lines + [""]


TABLE_HEADER = ("| model | split | paper (test %) | ours: mean ± std | median | min–max | n "
                "| wall time / run | provenance | benchmark knowledge | code | paper source |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|")


def _table_row(model, name, paper, entry) -> str:
    cells = [model, split_cell(name, entry), paper_cell(paper) if paper else "—",
             *our_cells(entry), provenance_cell(entry), knowledge_cell(entry),
             code_cell(entry), paper["source"] if paper else "—"]
    return "| " + " | ".join(cells) + " |"


def _speed_section(benchmarks: dict) -> list[str]:
    lines = ["## Speed", ""]
    if not benchmarks:
        return lines + [f"No benchmark files yet (`{BENCHMARKS}/*.json`).", ""]
    lines += ["Benchmark files (nested fields such as versions omitted; see each file).", ""]
    for relative, document in benchmarks.items():
        records = document if isinstance(document, list) else [document]
        records = [r for r in records if isinstance(r, dict)]
        columns = []
        for record in records:
            columns += [k for k, v in record.items() if k not in columns
                        and not isinstance(v, (dict, list))]
        lines += [f"### [{relative}]({relative})", ""]
        if not columns:
            lines += ["(no scalar fields)", ""]
            continue
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for record in records:
            lines.append("| " + " | ".join(scalar(record.get(c)) for c in columns) + " |")
        lines.append("")
    return lines


# Re-runs whose earlier results file has another name: the rule-learning baselines were
# written by a script since removed, under the convolution model's directory.
EARLIER_NAMES = {
    ("mlp_baseline", "rule_learning"): ("symbol_convolution", "rule_learning_mlp_baseline"),
    ("recurrent_baseline", "rule_learning"): ("symbol_convolution",
                                              "rule_learning_recurrent_baseline"),
}


def _rerun_section(results: dict, reruns: dict) -> list[str]:
    """One table per re-run set: each re-run beside the results file it trains again."""
    lines = []
    for set_name in sorted({key[0] for key in reruns}):
        lines += [f"## Re-runs: `{set_name}/`", "",
                  "Earlier results trained again, with the same configuration, on the code "
                  "named by each file's `versions` (package version and commit). The earlier "
                  "files stay as they were.", "",
                  "| model | results file | earlier: mean ± std (n) | re-run: mean ± std "
                  "| median | min–max | n | wall time / run | compgen-tf | provenance | code |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for (_, model, name), entry in sorted((k, v) for k, v in reruns.items()
                                              if k[0] == set_name):
            earlier = results.get(EARLIER_NAMES.get((model, name), (model, name)))
            before = our_cells(earlier)
            cells = [model, f"[{name}]({entry['path']})",
                     # The earlier figures link their own file, which the figure check reads.
                     f"[{before[0]} (n={before[3]})]({earlier['path']})" if earlier else "—",
                     *our_cells(entry),
                     str(entry.get("versions", {}).get("compgen-tf", "—")),
                     provenance_cell(entry), code_cell(entry)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def render_report(results_dir: Path, out: Path, runs_dir: Path):
    """The text of `out` (the results README) and the plots it shows, as
    `(text, [(png path, draw function)])`; nothing is written."""
    results_dir, out, runs_dir = Path(results_dir), Path(out), Path(runs_dir)
    results, benchmarks, reruns = read_results_dir(results_dir)
    plots_dir = out.parent / PLOTS
    lines = [
        "# Results",
        "",
        f"<!-- Generated by `{GENERATOR}`: do not edit by hand. -->",
        f"**Generated by `{GENERATOR}` from the JSON files of this directory: do not edit it "
        "by hand.** Rerun that command after adding results.",
        "",
        "Accuracies are exact match on the split's test set, in percent (a command counts only "
        "if its whole action sequence is right); ours are over seeds (`std` is the sample "
        "standard deviation, absent for one seed), each seed's model selected on validation "
        "exact match. A split name links to its results file (command, seeds, versions, "
        "configuration). \"—\" in our columns: no result yet.",
        "",
        "Provenance, from each results file: **faithful** (the paper's setup as far as the "
        "paper gives it), **closest to the paper** (the paper's setup where the paper and the "
        "authors' code give it, with the differences that remain named in the reason), "
        "**variant (chosen on validation)**, or **variant (chosen after test "
        "scores were seen)**, which also covers choices whose record does not show otherwise "
        "(\"not recorded\").",
        "",
        "Benchmark knowledge, read from each file's recorded configuration "
        "(`compgen_tf.experiments.knowledge`), as Kim (2021, Table 1) separates methods: "
        "what the configuration encodes of the benchmark's grammar, lexicon or word classes "
        "instead of learning it (a declared symmetry group, meta-training episodes built "
        "from a word class, a tie read from how words appear), or **learned from the data**. "
        "Not counted: the SCAN grammar check on inputs, which refuses commands outside "
        "SCAN's language and so changes no prediction on its test sets.",
        "",
        "Code, per file (`compgen_tf.experiments.staleness`): **current** when every seed "
        "ran at or after the last recorded change to its model's numerics "
        "(`compgen_tf/resources/numerics_changes.json`: initial draws, loss, training "
        "step, data order, the decoding that selects and scores models), **changed since** "
        "such a commit for the seeds trained before it (today's code trains other "
        "numbers; `reproduce --check FILE --seed N` says whether they land in the file's "
        "band, `tools/check_stale_results.py`), or, for a scoring fault's fix, scored "
        "with the fault (their test figures are wrong; `evaluate --run DIR` rescores a "
        "kept run), **unknown** when a seed recorded no commit "
        "(or the checkout cannot say). The README marks these † and ?.",
        "",
    ]
    used = set()
    for key, (title, explanation) in PAPERS.items():
        lines += [f"## {title}", "", explanation, "", TABLE_HEADER]
        for model, name, paper, entry in _paper_rows(results, key, used):
            lines.append(_table_row(model, name, paper, entry))
        lines.append("")
    lines += _translation_section(results, used)
    others = [key for key in sorted(results) if key not in used]
    lines += ["## Other results", ""]
    if others:
        lines += ["Results without a paper number to compare with.", "", TABLE_HEADER]
        lines += [_table_row(model, name, None, results[(model, name)]) for model, name in others]
    else:
        lines.append("None.")
    lines.append("")
    lines += _rerun_section(results, reruns)
    lines += category_section(results)

    plots, plot_lines = [], []
    for model, name in sorted(results):
        entry = results[(model, name)]
        images = []
        if len(entry["runs"]) >= 2:
            path = plots_dir / f"{model}__{name}__seeds.png"
            paper = paper_for(model, name)
            images.append((path, "test accuracy per seed",
                           lambda e=dict(entry, split=name), p=paper, o=path: plot_seeds(e, p, o)))
        path = plots_dir / f"{model}__{name}__curves.png"
        curves = run_curves(entry, name, runs_dir)
        if curves or path.exists():  # a plot committed from runs trained elsewhere is kept
            images.append((path, "validation accuracy during training",
                           (lambda c=curves, e=entry, n=name, o=path: plot_curves(c, e, n, o))
                           if curves else None))
        if is_translation(entry):
            path = plots_dir / f"{model}__{name}__bleu_loss.png"
            bleu_curves = translation_curves(entry, name, runs_dir)
            if bleu_curves or path.exists():
                images.append((path, "validation BLEU and training loss during training",
                               (lambda c=bleu_curves, e=entry, n=name, o=path:
                                plot_translation_curves(c, e, n, o)) if bleu_curves else None))
        if images:
            plot_lines += [f"### {model} / {name}", ""]
            for image, caption, draw in images:
                relative = image.relative_to(out.parent).as_posix()
                plot_lines += [f"![{model} {name}: {caption}]({relative})", ""]
                plots.append((image, draw))
    lines += ["## Plots", ""]
    if plot_lines:
        lines += ["Per-seed test accuracy (results with at least two seeds; dashed: the "
                  "paper's mean) and validation accuracy during training (runs whose "
                  "directories are on the machine that generated this file).", ""]
        lines += plot_lines
    else:
        lines += ["None yet (they need results with at least two seeds, or local run "
                  "directories).", ""]
    lines += _speed_section(benchmarks)
    return "\n".join(lines).rstrip("\n") + "\n", plots


def _paper_rows(results: dict, paper_key: str, used: set):
    """(model, name, paper, entry or None) for each row of a paper's table, in its order;
    adds the results files shown to `used`."""
    for (model, name), paper in PAPER_RESULTS.items():
        if paper["paper"] != paper_key:
            continue
        entry = results.get((model, name))
        if entry is not None:
            used.add((model, name))
        else:
            entry = pooled_entry(results, model, name)
            if entry is not None:
                used.update(entry["keys"])
        yield model, name, paper, entry


def render_summary(results_dir: Path) -> str:
    """The README's results table: the rows of each paper experiment that has results of ours
    (`SUMMARY_ROWS`: the configuration closest to the paper's first, then named variants),
    with the same statistics as `results/README.md`, which has every row and the reasons;
    provenance as its kind alone, benchmark knowledge as short tags."""
    results, _, _ = read_results_dir(Path(results_dir))
    lines = [SUMMARY_START,
             f"<!-- Generated by `{GENERATOR}` from results/: do not edit by hand. -->",
             "| paper | model | results | paper (test %) | ours: mean ± std | median "
             "| min–max | n | provenance | knowledge |", "|---|---|---|---|---|---|---|---|---|---|"]
    for model, name in SUMMARY_ROWS:
        paper = PAPER_RESULTS[(model, name)]
        entry = results.get((model, name))
        if entry is None:
            continue
        variant = f": {paper['variant']}" if "variant" in paper else ""
        cells = [SHORT_TITLES[paper["paper"]], model,
                 f"[{name}](results/{entry['path']}){variant}", paper_cell(paper),
                 *our_cells(entry)[:3], our_cells(entry)[3] + code_cell(entry, short=True),
                 provenance_cell(entry, short=True), knowledge_cell(entry, short=True)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(SUMMARY_END)
    return "\n".join(lines)


DOC_TABLE = re.compile(r"<!-- results-table: ([^>]*?) -->\n.*?<!-- results-table:end -->",
                       re.DOTALL)


def render_doc_tables(text: str, results_dir: Path, results_link: str = "../results") -> str:
    """`text` (a page of docs/) with each `<!-- results-table: MODEL/NAME ... -->` ...
    `<!-- results-table:end -->` block regenerated from those results files: every seed's test
    score and the statistics and provenance label of the tables above, so that a page's
    figures cannot drift from the files; and each `<!-- category-table: MODEL/NAME ... -->`
    block, the per-category table of those files
    (`compgen_tf.reporting.category_tables`)."""
    results, _, _ = read_results_dir(Path(results_dir))

    def table(match):
        keys = match.group(1).split()
        named = [results.get((key.partition("/")[0], key.partition("/")[2])) for key in keys]
        # A table of several models names each row's model too.
        several_models = len({key.partition("/")[0] for key in keys}) > 1
        translation = all(entry is not None and is_translation(entry) for entry in named)
        lines = [match.group(0).split("\n", 1)[0],
                 "| results file | test BLEU per seed | BLEU, authors' way, per seed | daxy "
                 "x/8 per seed | n | provenance |" if translation else
                 "| results file | test exact match per seed (%) | mean ± std | median "
                 "| min–max | n | provenance |",
                 "|---|---|---|---|---|---|" if translation else "|---|---|---|---|---|---|---|"]
        for key in keys:
            model, _, name = key.partition("/")
            entry = results.get((model, name)) or pooled_entry(results, model, name)
            if entry is None:
                raise ReportError(f"a results table names {key}, which has no results file")
            label = f"{model} / {name}" if translation or several_models else name
            if "path" in entry:
                link = f"[{label}]({results_link}/{entry['path']})"
            else:  # a pooled row links each file it pools: the figure check reads them
                link = label + " (" + ", ".join(
                    f"[{number}]({results_link}/{path})"
                    for number, path in enumerate(entry["pooled"], start=1)) + ")"
            runs = sorted(entry["runs"], key=lambda r: r["seed"])
            if translation:
                cells = [" / ".join(f"{run[field]:.2f}" for run in runs)
                         for field in ("test_bleu", "test_bleu_authors")]
                cells += [" / ".join(f"{run['daxy_exact']}/8" for run in runs),
                          str(len(runs)) + code_cell(entry, short=True)]
            else:
                cells = [" / ".join(percent(run["test_accuracy"]) for run in runs),
                         *our_cells(entry)[:4]]
            lines.append("| " + " | ".join([link, *cells,
                                             provenance_cell(entry, with_reason=False)]) + " |")
        return "\n".join(lines + ["<!-- results-table:end -->"])

    return render_category_tables(DOC_TABLE.sub(table, text), results, results_link)


def with_summary(readme_text: str, summary: str) -> str:
    """`readme_text` with the block between the summary markers replaced by `summary`."""
    start, end = readme_text.find(SUMMARY_START), readme_text.find(SUMMARY_END)
    if start < 0 or end < start:
        raise ReportError(f"the README has no {SUMMARY_START} ... {SUMMARY_END} block")
    return readme_text[:start] + summary + readme_text[end + len(SUMMARY_END):]


def build_report(results_dir: Path, out: Path, runs_dir: Path, readme: Path | None = None
                 ) -> dict:
    """Writes the results README, its plots and (given `readme`) the summary block of the
    project README; returns {"readme": path, "plots": [paths]}."""
    out = Path(out)
    text, plots = render_report(results_dir, out, runs_dir)
    for path, draw in plots:
        if draw is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            draw()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    plots_dir = out.parent / PLOTS
    if plots_dir.exists():  # drop plots of results that no longer exist
        for stale in sorted(set(plots_dir.glob("*.png")) - {path for path, _ in plots}):
            stale.unlink()
    if readme is not None:
        readme = Path(readme)
        readme.write_text(with_summary(readme.read_text(), render_summary(results_dir)))
        for page in documentation_pages(readme):
            page.write_text(render_doc_tables(page.read_text(), results_dir,
                                              _results_link(page, readme)))
    return {"readme": out, "plots": [path for path, _ in plots]}


def _results_link(page: Path, readme: Path) -> str:
    """How `page` links the `results/` folder beside `readme` ("../results" from docs/,
    "../../results" from docs/research/)."""
    return Path(os.path.relpath(Path(readme).parent / "results", Path(page).parent)).as_posix()


def documentation_pages(readme: Path) -> list[Path]:
    """The README's `docs/` pages, `docs/research/` included."""
    return sorted((Path(readme).parent / "docs").rglob("*.md"))


def stale_reports(results_dir: Path, out: Path, runs_dir: Path, readme: Path | None = None
                  ) -> list[str]:
    """What regenerating would change (nothing drawn or written): the files whose text differs
    from what the committed results give, and plots that are missing."""
    out = Path(out)
    text, plots = render_report(results_dir, out, runs_dir)
    stale = []
    if not out.exists() or out.read_text() != text:
        stale.append(f"{out} differs from what `{GENERATOR}` writes")
    stale += [f"{path} is missing" for path, _ in plots if not path.exists()]
    if readme is not None:
        readme = Path(readme)
        current = readme.read_text()
        if with_summary(current, render_summary(results_dir)) != current:
            stale.append(f"{readme}: its results table differs from what `{GENERATOR}` writes")
        pages = documentation_pages(readme)
        for page in pages:
            if render_doc_tables(page.read_text(), results_dir,
                                 _results_link(page, readme)) != page.read_text():
                stale.append(f"{page}: a results table differs from what `{GENERATOR}` writes")
        # Typed figures: each must come from the file it cites or be a paper's figure.
        stale += [f"unbacked figure: {problem}" for problem in
                  check_documents(documents(readme.parent), results_dir)]
    return stale
