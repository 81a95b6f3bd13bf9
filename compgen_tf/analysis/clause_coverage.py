"""How many test commands of a length split are made only of clauses seen in training.

A SCAN command is one clause or two joined by `and` / `after`, and its output is the outputs
of its clauses (in some order). A model that translates clause by clause can at best get the
test commands whose every clause occurs in a training command. This counts them from the
grammar and the splits' definitions alone (output lengths): no model and no test score is
involved (`tools/length_clause_coverage.py`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from tfds_scan import grammar
from tfds_scan.splits import LENGTH_DEV_SPLITS

# The official length split (train: at most 22 actions; test: 24-48), then the development
# splits (tfds_scan.splits.LENGTH_DEV_SPLITS).
SPLITS = {"length": (22, (24, 48)), **LENGTH_DEV_SPLITS}


def clauses(command: str) -> list[str]:
    """The clauses of a SCAN command.

    Args:
        command: a SCAN command.

    Returns:
        Its one or two clauses, in the command's order (not the output's).
    """
    return re.split(r" and | after ", command)


@functools.cache
def output_lengths() -> dict[str, int]:
    """Every SCAN command's number of actions (computed once: three splits read it).

    Returns:
        `{command: number of actions}` over all SCAN commands.
    """
    return {c: len(grammar.interpret(c).split()) for c in grammar.all_commands()}


def coverage(longest_train: int, test_range: tuple[int, int]) -> dict:
    """The clause coverage of a length split.

    Args:
        longest_train: the most actions of a training command.
        test_range: the least and most actions of a test command.

    Returns:
        The numbers of training and test commands, how many test commands have every clause
        in a training command (and the share), and the unseen clauses: how many, their
        output lengths and up to four examples.
    """
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
