"""The `errors` command; its manual is `compgen_tf.reporting.error_analysis`'s docstring."""

from __future__ import annotations

import sys

from compgen_tf.cli.common import ArgumentParser, run_directory_missing
from compgen_tf.reporting import error_analysis as reporting_error_analysis
from compgen_tf.reporting.error_analysis import run_errors, summary_lines, write_error_kinds


def main(argv=None) -> int:
    """`python -m compgen_tf errors`: prints the error kinds of a run's split and writes
    `error_kinds_<split>.json`; exit code 0, or 2 when the run directory does not exist or
    its errors file cannot be read."""
    parser = ArgumentParser(prog="python -m compgen_tf errors",
                            description=reporting_error_analysis.__doc__)
    parser.add_argument("--run", required=True, help="run directory written by `train`")
    parser.add_argument("--split", default="test", help="which errors_<split>.jsonl to read")
    args = parser.parse_args(argv)
    if run_directory_missing(args.run):
        return 2
    try:
        analysis = run_errors(args.run, args.split)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in summary_lines(analysis, args.split):
        print(line)
    print(f"wrote {write_error_kinds(args.run, args.split, analysis)}")
    return 0
