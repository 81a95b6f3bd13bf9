"""How many test commands of a length split are made only of clauses seen in training.

    python tools/length_clause_coverage.py [--out results/checks/length_clause_coverage.json]

A SCAN command is one clause or two joined by `and` / `after`, and its output is the outputs
of its clauses (in some order). A model that translates clause by clause can at best get
the test commands whose every clause occurs in a training command. This counts them from
the grammar and the splits' definitions alone (output lengths), for the official length
split (train: at most 22 actions; test: 24-48) and for the development splits `length_dev`
(train: at most 16; test: 18-22) and `length_dev_unseen_clause` (at most 15; 17-22). No model and no test score is involved. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import sys

from compgen_tf.analysis.clause_coverage import SPLITS, coverage
from compgen_tf.analysis.output import emit


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    emit({"check": "length_clause_coverage",
          **{name: coverage(*split) for name, split in SPLITS.items()}},
         args.out, "length_clause_coverage.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
