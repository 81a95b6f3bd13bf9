"""Where in the output a length model goes wrong: test exact match by the place of the longest clause.

    python scripts/length_errors_by_clause_order.py --split length_dev --runs RUN [RUN ...]
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
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_output import emit  # noqa: E402

CLASSES = ("single clause", "longest first", "longest second", "equal")


def clauses_in_output_order(command: str) -> list[str]:
    """The command's clauses in the order their actions appear in the output."""
    if " after " in command:
        first, second = command.split(" after ")
        return [second, first]
    return command.split(" and ")


def clause_order_class(command: str, interpret) -> str:
    """One of `CLASSES`: where the clause with the most actions comes in the output."""
    clauses = clauses_in_output_order(command)
    if len(clauses) == 1:
        return "single clause"
    first, second = (len(interpret(clause).split()) for clause in clauses)
    return "equal" if first == second else "longest first" if first > second else "longest second"


def first_error_place(command: str, expected: str, predicted: str, interpret) -> str:
    """Where the first wrong action of a wrong prediction falls, in the expected output:
    "first clause", "boundary" (the first clause came out right and the next action is wrong)
    or "second clause"; "single clause" for a command without `and`/`after`."""
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
    """{class: {"commands": n, "wrong": m, "wrong_share": m / n}} over the classes that
    occur; with `wrong_length` (the wrong commands whose prediction has the wrong number of
    actions) also {"wrong_length": k}: how many of the m a length head miscounted."""
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
    """`breakdown` of one run from its wrong predictions (`errors_test.jsonl` rows, each
    {"command", "expected", "predicted"}), with `wrong_length` and, per class,
    `first_error`: {place: count} over `PLACES`. A ValueError if a wrong command is not a
    test command (the run was on another split)."""
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
        errors = Path(run) / "errors_test.jsonl"
        if not errors.is_file():
            print(f"error: {errors} does not exist (a finished run writes it)", file=sys.stderr)
            return 2
        rows = [json.loads(line) for line in errors.read_text().splitlines()]
        try:
            per_run.append({"run": run, "by_class": run_breakdown(commands, rows,
                                                                  tfds_scan.interpret)})
        except ValueError as error:
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
