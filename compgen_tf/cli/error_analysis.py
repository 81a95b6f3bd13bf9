"""Kinds of wrong translations in a run: `python -m compgen_tf errors --run DIR`.

Reads `DIR/errors_<split>.jsonl` (written by `compgen_tf.cli.evaluate` and at the end of
training) and sorts every wrong translation into one kind, the first that applies:

| kind | the prediction |
|---|---|
| `stops_early` | is a proper prefix of the expected actions |
| `runs_over` | continues past the expected actions (they are its proper prefix) |
| `missing_action` | never emits an action that the expected sequence contains |
| `other` | anything else (a right set of actions in a wrong order or count) |

On add-jump these kinds separate the Syntactic Attention paper's failure modes: a
model that reads `jump` like the end of a command stops early; one whose semantic
stream never learned `jump`'s action misses `I_JUMP`; counting errors stop early or
run over. Prints the counts with an example of each and writes
`DIR/error_kinds_<split>.json`.
"""

from __future__ import annotations

import argparse
import sys

from compgen_tf.reporting.error_analysis import run_errors, summary_lines, write_error_kinds


def main(argv=None) -> int:
    """`python -m compgen_tf errors`: prints the error kinds of a run's split and writes
    `error_kinds_<split>.json`; exit code 0, or 2 when the run's errors file cannot be
    read."""
    parser = argparse.ArgumentParser(prog="python -m compgen_tf errors",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="run directory written by compgen_tf.train")
    parser.add_argument("--split", default="test", help="which errors_<split>.jsonl to read")
    args = parser.parse_args(argv)
    try:
        analysis = run_errors(args.run, args.split)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in summary_lines(analysis, args.split):
        print(line)
    print(f"wrote {write_error_kinds(args.run, args.split, analysis)}")
    return 0
