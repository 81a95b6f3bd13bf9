"""Where in the output a length model goes wrong: test exact match by the place of the longest clause.

    python tools/length_errors_by_clause_order.py --split length_dev --runs RUN [RUN ...]
        [--out results/checks/FILE.json]

A diagnostic for issue 36 (docs/length_generalization.md, section 10). A SCAN command is one
clause or two joined by `and` (outputs in order) or `after` (outputs swapped). Each test
command of `--split` is put in one class by where its output's longest clause (most actions)
comes: "single clause", "longest first" (another clause follows it in the output), "longest
second" or "equal". For each run (a training run directory with `errors_test.jsonl`, as
`reproduce` writes it), prints the number of test commands and of wrong ones per class.
On a development split every figure is a test score of a split built from training data;
on an official split it is a report on runs whose design was already fixed. Each class also
counts the wrong predictions with the wrong number of actions (`wrong_length`): where a
length head miscounted; and where their first wrong action falls (`first_error`): in the
first clause of the output, at the boundary (the first clause right, the next action wrong)
or later in the second clause.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.analysis.clause_order import CLASSES, run_breakdown  # noqa: E402
from compgen_tf.analysis.output import emit, read_test_errors  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", required=True)
    parser.add_argument("--runs", nargs="+", required=True)
    parser.add_argument("--out")
    args = parser.parse_args(argv)

    import tfds_scan
    from tfds_scan.splits import DEV_CONFIG_NAMES

    try:
        test = tfds_scan.split_examples(args.split)["test"]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    commands = [command for command, _ in test]
    per_run = []
    for run in args.runs:
        try:
            rows = read_test_errors(run)
            per_run.append({"run": run, "by_class": run_breakdown(commands, rows,
                                                                  tfds_scan.interpret)})
        except (FileNotFoundError, ValueError) as error:
            print(f"error: {run}: {error}", file=sys.stderr)
            return 2
    if args.split in DEV_CONFIG_NAMES:
        provenance = {"kind": "validation", "reason": "a development split built from a "
                      "training file; a diagnostic, no setting chosen"}
    else:  # an official test set: read after its scores, so what follows from it is post-hoc
        provenance = {"kind": "post-hoc", "reason": "the official test errors of finished "
                      "runs; a diagnostic read after the test scores, so any setting it "
                      "leads to is post-hoc"}
    emit({"split": args.split, "classes": list(CLASSES), "per_run": per_run,
          "provenance": provenance},
         args.out, "length_errors_by_clause_order.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
