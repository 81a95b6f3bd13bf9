"""How many test commands of a length split are made only of clauses seen in training.

    python scripts/length_clause_coverage.py [--out results/checks/length_clause_coverage.json]

A SCAN command is one clause or two joined by `and` / `after`, and its output is the outputs
of its clauses (in some order). A model that translates clause by clause can at best get
the test commands whose every clause occurs in a training command. This counts them from
the grammar and the splits' definitions alone (output lengths), for the official length
split (train: at most 22 actions; test: 24-48) and for the development splits `length_dev`
(train: at most 16; test: 18-22) and `length_dev_unseen_clause` (at most 15; 17-22). No model and no test score is involved. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_output import emit  # noqa: E402
from tfds_scan import grammar  # noqa: E402
from tfds_scan.splits import LENGTH_DEV_SPLITS  # noqa: E402

# The official length split, then the development splits (tfds_scan.splits.LENGTH_DEV_SPLITS).
SPLITS = {"length": (22, (24, 48)), **LENGTH_DEV_SPLITS}


def clauses(command: str) -> list[str]:
    return re.split(r" and | after ", command)


@functools.cache
def output_lengths() -> dict[str, int]:
    """Every SCAN command's number of actions (computed once: three splits read it)."""
    return {c: len(grammar.interpret(c).split()) for c in grammar.all_commands()}


def coverage(longest_train: int, test_range: tuple[int, int]) -> dict:
    lengths = output_lengths()
    train = [c for c, n in lengths.items() if n <= longest_train]
    test = [c for c, n in lengths.items() if test_range[0] <= n <= test_range[1]]
    seen = {clause for command in train for clause in clauses(command)}
    unseen = Counter(clause for command in test for clause in clauses(command)
                     if clause not in seen)
    covered = sum(all(clause in seen for clause in clauses(c)) for c in test)
    unseen_lengths = sorted({lengths[clause] for clause in unseen})
    return {"train_commands": len(train), "test_commands": len(test),
            "test_commands_with_every_clause_seen": covered,
            "share": round(covered / len(test), 4),
            "share_with_an_unseen_clause": round(1 - covered / len(test), 4),
            "unseen_clauses": len(unseen), "unseen_clause_output_lengths": unseen_lengths,
            "unseen_clause_examples": sorted(unseen)[:4]}


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
