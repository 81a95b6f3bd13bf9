"""Test exact match by the clauses a test command holds that no training command holds.

A SCAN command is one clause or two joined by `and` / `after`. On a split that holds out
combinations rather than lengths (the MCD splits, add-jump, around-right), a test command
fails or succeeds largely by its unseen clause: `jump opposite left` where training has
`opposite` only under `twice` and `thrice`, say. This groups a run's test commands by those
clauses, exactly and by shape (the action verbs written `V`, the directions `D`), from the
split's train and test commands and the run's wrong translations alone. A diagnostic of
finished runs: it reads SCAN's lexicon to name the shapes and chooses nothing.
"""

from __future__ import annotations

from collections import Counter

from compgen_tf.analysis.clause_coverage import clauses

_ACTION_VERBS = ("walk", "look", "run", "jump")
_DIRECTIONS = ("left", "right")


def clause_shape(clause: str) -> str:
    """A clause with its action verb written `V` and its direction `D`.

    `turn` is kept: its clauses output turns alone, not a verb's action.

    Args:
        clause: one SCAN clause, e.g. `"jump opposite left twice"`.

    Returns:
        Its shape, e.g. `"V opposite D twice"`.

    Example:
        >>> clause_shape("turn around right")
        'turn around D'
    """
    words = ["V" if word in _ACTION_VERBS else "D" if word in _DIRECTIONS else word
             for word in clause.split()]
    return " ".join(words)


def _group_counts(groups_of_commands, wrong: set[str]) -> dict:
    total, failed = Counter(), Counter()
    for command, groups in groups_of_commands:
        for group in groups:
            total[group] += 1
            failed[group] += command in wrong
    return {group: {"commands": total[group],
                    "exact_match": round(1 - failed[group] / total[group], 4)}
            for group in sorted(total, key=lambda g: (-total[g], g))}


def by_unseen_clause(train_commands, test_commands, error_rows) -> dict:
    """The breakdown of one run.

    Args:
        train_commands: the split's training commands.
        test_commands: its test commands.
        error_rows: the run's wrong test translations (dicts with `command`), as
            `errors_test.jsonl` holds them.

    Returns:
        `exact_match`; `all_clauses_seen`: the test commands every clause of which is in a
        training command (their number and exact match); `by_shape` and `by_clause`: for each
        shape (and each clause) of an unseen clause, the test commands holding one and their
        exact match, most commands first (a command with two unseen clauses counts in both).

    Raises:
        ValueError: a wrong translation of a command that is not a test command; the
            message names it.

    Example:
        >>> by_unseen_clause(["jump twice"], ["jump twice and jump"], [])["by_clause"]
        {'jump': {'commands': 1, 'exact_match': 1.0}}
    """
    seen = {clause for command in train_commands for clause in clauses(command)}
    test_commands = list(test_commands)
    known = set(test_commands)
    wrong = set()
    for row in error_rows:
        if row["command"] not in known:
            raise ValueError(f"wrong translation of {row['command']!r}, which is not a test "
                             "command of this split")
        wrong.add(row["command"])
    unseen = [(command, sorted({c for c in clauses(command) if c not in seen}))
              for command in test_commands]
    covered = [command for command, held in unseen if not held]
    return {
        "exact_match": round(1 - len(wrong) / len(test_commands), 4),
        "all_clauses_seen": {
            "commands": len(covered),
            "exact_match": (round(1 - sum(c in wrong for c in covered) / len(covered), 4)
                            if covered else None)},
        "by_shape": _group_counts([(command, {clause_shape(c) for c in held})
                                   for command, held in unseen], wrong),
        "by_clause": _group_counts(unseen, wrong),
    }


def unseen_shapes(train_commands, test_commands) -> dict[str, int]:
    """How many test commands hold an unseen clause of each shape, with no run: the split's
    own structure.

    Args:
        train_commands: the split's training commands.
        test_commands: its test commands.

    Returns:
        `{shape: test commands holding an unseen clause of that shape}`, most first.
    """
    return {shape: counts["commands"] for shape, counts
            in by_unseen_clause(train_commands, test_commands, [])["by_shape"].items()}

