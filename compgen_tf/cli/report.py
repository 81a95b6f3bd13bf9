"""Regenerate a results README from a results directory: `python -m compgen_tf report`.

    python -m compgen_tf report [--results-dir results] [--out results/README.md] [--runs-dir runs]
    python -m compgen_tf report --check     # exit 1 if the committed tables are stale

Reads every results file of the results directory (default: `results/` of the current
directory) and writes the results README with one table per paper, our results beside the
paper's, and its plots in `plots/` next to it (`compgen_tf.reporting.report`). Run from the
repository's root, it also regenerates the results table of `README.md` and the results
tables of `docs/`; elsewhere only the README named by `--readme`. Nothing is written into
the installed package. A malformed results file stops the report with an error naming it
(exit code 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from compgen_tf.cli.common import ArgumentParser
from compgen_tf.experiments.results import RESULTS_DIR
from compgen_tf.reporting.report import (GENERATOR, SUMMARY_START, ReportError, build_report,
                                         stale_reports)


def default_readme(results_dir: Path) -> Path | None:
    """`README.md` of the current directory when `results_dir` is the current directory's
    `results/` and that README has a results table to regenerate; else None."""
    readme = Path("README.md")
    if (results_dir.resolve() == RESULTS_DIR.resolve() and readme.is_file()
            and SUMMARY_START in readme.read_text(encoding="utf-8")):
        return readme
    return None


def main(argv=None) -> int:
    """`python -m compgen_tf report`: 0 when written (or, with --check, up to date), 1 when
    --check finds a stale file, 2 for bad input."""
    parser = ArgumentParser(prog=GENERATOR, description=__doc__)
    parser.add_argument("--results-dir", default=str(RESULTS_DIR),
                        help=f"results directory (default: {RESULTS_DIR}/ of the current "
                             f"directory)")
    parser.add_argument("--out", help="README to write (default: RESULTS_DIR/README.md)")
    parser.add_argument("--readme",
                        help="project README whose results table to regenerate, with the "
                             "results tables of the docs/ beside it (default: ./README.md "
                             "when RESULTS_DIR is ./results and it has such a table)")
    parser.add_argument("--runs-dir", default="runs",
                        help="run directories, for training curves (default: runs/ of the "
                             "current directory)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if regenerating would change a file")
    args = parser.parse_args(argv)
    results_dir = Path(args.results_dir)
    if not results_dir.is_dir():
        print(f"error: results directory {results_dir} does not exist", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else results_dir / "README.md"
    readme = Path(args.readme) if args.readme else default_readme(results_dir)
    try:
        if args.check:
            stale = stale_reports(results_dir, out, Path(args.runs_dir), readme)
            for line in stale:
                print(f"stale: {line}", file=sys.stderr)
            return 1 if stale else 0
        report = build_report(results_dir, out, Path(args.runs_dir), readme)
    except ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {report['readme']} and {len(report['plots'])} plot(s)"
          + (f", and the results table of {readme}" if readme else ""))
    return 0

