"""Test exact match by the length of the expected output, for finished runs on one SCAN split.

    python tools/accuracy_by_output_length.py --split length --runs RUN [RUN ...]
        [--out results/checks/FILE.json]

Where a model's length generalization ends: for each run (a run directory with
`errors_test.jsonl`, as `train` and `reproduce` write it), the test commands of `--split` are
grouped by the number of actions their expected output has, and each group gets its number of
commands and the run's exact match on them. Also, for the wrong predictions, how long they
were (`wrong_predicted_lengths`: median and largest, and the share no longer than the longest
training output), which separates a model that stops at the lengths it was trained on from one
that runs on. A diagnostic read off finished runs; it chooses nothing.
"""

from __future__ import annotations

import collections
import os
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.cli.common import split_runs_tool  # noqa: E402


def by_length(test_pairs, error_rows, longest_train: int) -> dict:
    """The breakdown of one run: `test_pairs` (command, actions) of the split, `error_rows` the
    run's wrong translations ({"command", "expected", "predicted"})."""
    total = collections.Counter(len(actions.split()) for _, actions in test_pairs)
    wrong = collections.Counter()
    commands = {command for command, _ in test_pairs}
    for row in error_rows:
        if row["command"] not in commands:
            raise ValueError(f"wrong translation of {row['command']!r}, which is not a test "
                             "command of this split")
        wrong[len(row["expected"].split())] += 1
    lengths = [len(row["predicted"].split()) for row in error_rows]
    return {
        "exact_match_by_length": {str(n): {"commands": total[n],
                                           "exact_match": round(1 - wrong[n] / total[n], 4)}
                                  for n in sorted(total)},
        "exact_match": round(1 - len(error_rows) / len(test_pairs), 4),
        "wrong_predicted_lengths": {
            "median": statistics.median(lengths) if lengths else None,
            "largest": max(lengths, default=None),
            "share_at_most_longest_train": (round(sum(n <= longest_train for n in lengths)
                                                  / len(lengths), 4) if lengths else None)},
    }


def _longest_train(examples) -> int:
    return max(len(actions.split()) for _, actions in examples["train"])


def main(argv=None) -> int:
    return split_runs_tool(
        "accuracy_by_output_length.py", __doc__,
        lambda examples, rows: by_length(examples["test"], rows, _longest_train(examples)),
        argv,
        provenance={"kind": "check", "reason": "a diagnostic of finished runs' test errors, "
                    "read after their scores; no setting chosen"},
        about_split=lambda examples: {"longest_train_output": _longest_train(examples)})


if __name__ == "__main__":
    sys.exit(main())
