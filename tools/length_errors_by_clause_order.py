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

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.analysis.clause_order import CLASSES, run_breakdown  # noqa: E402
from compgen_tf.cli.common import split_runs_tool  # noqa: E402


def main(argv=None) -> int:
    import tfds_scan

    return split_runs_tool(
        "length_errors_by_clause_order.py", __doc__,
        lambda examples, rows: {"by_class": run_breakdown(
            [command for command, _ in examples["test"]], rows, tfds_scan.interpret)},
        argv, about_split=lambda examples: {"classes": list(CLASSES)})


if __name__ == "__main__":
    sys.exit(main())
