"""Test exact match by the unseen clauses of the test commands, for finished runs on one SCAN split.

    python tools/accuracy_by_unseen_clause.py --split scan_mcd3 --runs RUN [RUN ...]
        [--out results/checks/FILE.json]

Which held-out combinations a model gets: each test command of `--split` is grouped by the
clauses it holds that no training command holds (`jump opposite left`), exactly and by shape
(`V opposite D`), and each group gets its number of commands and each run's exact match on
them (a run directory with `errors_test.jsonl`, as `train` and `reproduce` write it); the test
commands made only of seen clauses are a group of their own. The split's unseen shapes come
first, from its files alone (`compgen_tf.analysis.unseen_clauses`). A diagnostic read off
finished runs; it chooses nothing.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.cli.common import split_runs_tool  # noqa: E402
from compgen_tf.analysis.unseen_clauses import by_unseen_clause, unseen_shapes  # noqa: E402


def _commands(pairs):
    return [command for command, _ in pairs]


def main(argv=None) -> int:
    return split_runs_tool(
        "accuracy_by_unseen_clause.py", __doc__,
        lambda examples, rows: by_unseen_clause(_commands(examples["train"]),
                                                _commands(examples["test"]), rows),
        argv,
        about_split=lambda examples: {"unseen_shapes": unseen_shapes(
            _commands(examples["train"]), _commands(examples["test"]))})


if __name__ == "__main__":
    sys.exit(main())
