"""Where in the output a length model goes wrong: test errors by the place of the longest clause.

A SCAN command is one clause or two joined by `and` (outputs in order) or `after` (outputs
swapped). Each test command is put in one class by where its output's longest clause (most
actions) comes: "single clause", "longest first" (another clause follows it in the output),
"longest second" or "equal". A run's wrong predictions are counted per class, with those of
the wrong number of actions (`wrong_length`: where a length head miscounted) and where their
first wrong action falls (`first_error`): in the first clause of the output, at the boundary
(the first clause right, the next action wrong) or later in the second clause
(`tools/length_errors_by_clause_order.py`, docs/length_generalization.md section 10).
"""

from __future__ import annotations

CLASSES = ("single clause", "longest first", "longest second", "equal")


def clauses_in_output_order(command: str) -> list[str]:
    """The command's clauses in the order their actions appear in the output.

    Args:
        command: a SCAN command.

    Returns:
        Its clauses, swapped for `after` (whose second clause is done first).
    """
    if " after " in command:
        first, second = command.split(" after ")
        return [second, first]
    return command.split(" and ")


def clause_order_class(command: str, interpret) -> str:
    """Where the clause with the most actions comes in the output.

    Args:
        command: a SCAN command.
        interpret: the SCAN interpretation, command -> actions (`tfds_scan.interpret`).

    Returns:
        One of `CLASSES`.
    """
    clauses = clauses_in_output_order(command)
    if len(clauses) == 1:
        return "single clause"
    first, second = (len(interpret(clause).split()) for clause in clauses)
    return "equal" if first == second else "longest first" if first > second else "longest second"


def first_error_place(command: str, expected: str, predicted: str, interpret) -> str:
    """Where the first wrong action of a wrong prediction falls, in the expected output.

    Args:
        command: the SCAN command.
        expected: its expected actions.
        predicted: the (wrong) predicted actions.
        interpret: the SCAN interpretation, command -> actions.

    Returns:
        "first clause", "boundary" (the first clause came out right and the next action is
        wrong) or "second clause"; "single clause" for a command without `and`/`after`.
    """
    clauses = clauses_in_output_order(command)
    if len(clauses) == 1:
        return "single clause"
    expected, predicted = expected.split(), predicted.split()
    first_wrong = next((i for i, (e, p) in enumerate(zip(expected, predicted)) if e != p),
                       min(len(expected), len(predicted)))
    first_length = len(interpret(clauses[0]).split())
    return ("first clause" if first_wrong < first_length else
            "boundary" if first_wrong == first_length else "second clause")


def breakdown(test_commands, wrong_commands, interpret,
              wrong_length=None) -> dict[str, dict[str, int]]:
    """Test commands and wrong ones per clause-order class.

    Args:
        test_commands: the split's test commands.
        wrong_commands: those a run got wrong.
        interpret: the SCAN interpretation, command -> actions.
        wrong_length: the wrong commands whose prediction has the wrong number of actions,
            or None.

    Returns:
        `{class: {"commands": n, "wrong": m, "wrong_share": m / n}}` over the classes that
        occur; with `wrong_length`, also `{"wrong_length": k}`: how many of the m a length
        head miscounted.
    """
    counts = {name: {"commands": 0, "wrong": 0} for name in CLASSES}
    if wrong_length is not None:
        for row in counts.values():
            row["wrong_length"] = 0
    wrong = set(wrong_commands)
    for command in test_commands:
        row = counts[clause_order_class(command, interpret)]
        row["commands"] += 1
        row["wrong"] += command in wrong
        if wrong_length is not None:
            row["wrong_length"] += command in wrong_length
    return {name: {**row, "wrong_share": row["wrong"] / row["commands"]}
            for name, row in counts.items() if row["commands"]}


PLACES = ("single clause", "first clause", "boundary", "second clause")


def run_breakdown(test_commands, error_rows, interpret) -> dict[str, dict]:
    """`breakdown` of one run from its wrong predictions.

    Args:
        test_commands: the split's test commands.
        error_rows: the run's `errors_test.jsonl` rows, each
            `{"command", "expected", "predicted"}`.
        interpret: the SCAN interpretation, command -> actions.

    Returns:
        `breakdown` with `wrong_length` and, per class, `first_error`: `{place: count}` over
        `PLACES`.

    Raises:
        ValueError: a wrong command is not a test command (the run was on another split).
    """
    known = set(test_commands)
    foreign = [row["command"] for row in error_rows if row["command"] not in known]
    if foreign:
        raise ValueError(f"{len(foreign)} of its wrong commands are not test commands of this "
                         f"split (e.g. {foreign[0]!r}): a run on another split?")
    miscounted = {row["command"] for row in error_rows
                  if len(row["predicted"].split()) != len(row["expected"].split())}
    by_class = breakdown(test_commands, [row["command"] for row in error_rows], interpret,
                         miscounted)
    for row in by_class.values():
        row["first_error"] = dict.fromkeys(PLACES, 0)
    for row in error_rows:
        place = first_error_place(row["command"], row["expected"], row["predicted"], interpret)
        by_class[clause_order_class(row["command"], interpret)]["first_error"][place] += 1
    return by_class
