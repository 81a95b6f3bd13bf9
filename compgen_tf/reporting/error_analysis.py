"""Kinds of wrong translations in a run: `python -m compgen_tf errors --run DIR`.

Reads `DIR/errors_<split>.jsonl` (written by `compgen_tf.cli.evaluate` and at the end of
training) and sorts every wrong translation into one kind, the first that applies:

| kind | the prediction |
|---|---|
| `stops_early` | is a proper prefix of the expected actions |
| `runs_over` | continues past the expected actions (they are its proper prefix) |
| `missing_action` | never emits an action that the expected sequence contains |
| `other` | anything else (a right set of actions in a wrong order or count) |

On add-jump these kinds separate the Syntactic Attention paper's failure modes: a
model that reads `jump` like the end of a command stops early; one whose semantic
stream never learned `jump`'s action misses `I_JUMP`; counting errors stop early or
run over. Prints the counts with an example of each and writes
`DIR/error_kinds_<split>.json`. Where the errors carry a category (COGS's gen set: each
line's generalization case), the same kinds are also counted per category
(`kinds_by_category` in the file, one line per category in the output).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from compgen_tf.training.categories import counts_by_category

KINDS = ("stops_early", "runs_over", "missing_action", "other")
# The never-emitted tokens printed, most frequent first: SCAN has 6 actions, a COGS logical
# form hundreds of tokens (the file keeps them all).
SHOWN_MISSING = 10


def error_kind(expected: str, predicted: str) -> tuple[str, list[str]]:
    """The kind of one wrong translation, and the expected actions it never emits."""
    want, got = expected.split(), predicted.split()
    if want == got:
        raise ValueError(f"not an error: {expected!r} was predicted exactly")
    if len(got) < len(want) and want[:len(got)] == got:
        return "stops_early", []
    if len(got) > len(want) and got[:len(want)] == want:
        return "runs_over", []
    missing = sorted(set(want) - set(got))
    return ("missing_action", missing) if missing else ("other", [])


def classify_errors(records) -> dict:
    """{"errors", "kinds": {kind: count}, "missing_actions": {action: count},
    "examples": {kind: first record of that kind}} over `records` of
    {command, expected, predicted}; when the records carry a `category`, also
    "kinds_by_category": {category: {kind: count}} (every kind, zeros included)."""
    records = list(records)
    kinds, missing_actions, examples = Counter(), Counter(), {}
    for record in records:
        kind, missing = error_kind(record["expected"], record["predicted"])
        kinds[kind] += 1
        missing_actions.update(missing)
        examples.setdefault(kind, record)
    analysis = {"errors": sum(kinds.values()), "kinds": {k: kinds[k] for k in KINDS},
                "missing_actions": dict(sorted(missing_actions.items())), "examples": examples}
    if records and all("category" in record for record in records):
        by_category = counts_by_category(
            records, lambda record: error_kind(record["expected"], record["predicted"])[0])
        analysis["kinds_by_category"] = {category: {k: counts.get(k, 0) for k in KINDS}
                                         for category, counts in by_category.items()}
    return analysis


def run_errors(run_dir, split: str = "test") -> dict:
    """`classify_errors` of the run's `errors_<split>.jsonl`; a FileNotFoundError (saying how
    to write it) or a ValueError (naming the file) when it cannot be read."""
    errors_file = Path(run_dir) / f"errors_{split}.jsonl"
    if not errors_file.exists():
        raise FileNotFoundError(f"{errors_file} does not exist; run `python -m compgen_tf "
                                f"evaluate --run {run_dir}` first")
    try:
        records = [json.loads(line) for line in errors_file.read_text().splitlines() if line]
        return classify_errors(records)
    except (json.JSONDecodeError, KeyError, ValueError) as error:
        raise ValueError(f"{errors_file}: {error}") from error


def summary_lines(analysis: dict, split: str) -> list[str]:
    """The counts of `analysis` with an example of each kind, as the command prints them."""
    lines = [f"{analysis['errors']} wrong translations on {split}"]
    for kind in KINDS:
        count = analysis["kinds"][kind]
        share = count / analysis["errors"] if analysis["errors"] else 0.0
        lines.append(f"  {kind:<15} {count:>6}  ({share:.1%})")
        if kind in analysis["examples"]:
            example = analysis["examples"][kind]
            lines.append(f"      e.g. {example['command']!r} -> {example['predicted']!r}")
    if analysis["missing_actions"]:
        missing = sorted(analysis["missing_actions"].items(), key=lambda item: -item[1])
        more = len(missing) - SHOWN_MISSING
        lines.append("  never emitted: " + ", ".join(
            f"{action} ({count})" for action, count in missing[:SHOWN_MISSING])
            + (f", and {more} more (error_kinds_<split>.json lists them)" if more > 0 else ""))
    if "kinds_by_category" in analysis:
        lines.append("  by category: " + " / ".join(KINDS))
        for category, counts in analysis["kinds_by_category"].items():
            lines.append(f"    {category:<55} " + " ".join(f"{counts[k]:>6}" for k in KINDS))
    return lines


def write_error_kinds(run_dir, split: str, analysis: dict) -> Path:
    """Writes `analysis` to the run's `error_kinds_<split>.json`; returns its path."""
    out = Path(run_dir) / f"error_kinds_{split}.json"
    out.write_text(json.dumps(analysis, indent=2) + "\n")
    return out
