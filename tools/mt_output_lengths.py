"""How long a translation run's free outputs are against the references (issue 73).

    python tools/mt_output_lengths.py --run RUN_DIR [--run ...] --out results/checks/FILE.json

Reads each run's `errors_test.jsonl` (the wrongly translated test sentences, with what the
model emitted) and `metrics.json` (how many test sentences there are and how many were
exact), and counts the wrong translations that are longer, shorter or as long as their
reference, those at least twice as long, and those that ran to the model's output limit
(`model_args.max_output_length` of the run's `config.json`): a translation that never emits
`<eos>` stops there. Free corpus BLEU pays for every extra token of such a run-on output; the
authors' way cuts each output to the split's longest reference first, so the gap between the
two counts shows how much of a run's score is lost to outputs that do not stop.

`--keep-earlier` keeps the counts that `--out` already holds for other runs (a seed whose
run directory is gone keeps its committed counts when later seeds are added), and their
commands under `earlier_commands`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def run_lengths(run_dir: Path) -> dict:
    """The length counts of one run directory's test translations."""
    config = json.loads((run_dir / "config.json").read_text())
    metrics = json.loads((run_dir / "metrics.json").read_text())
    limit = config["model_args"]["max_output_length"]
    wrong = [json.loads(line) for line in (run_dir / "errors_test.jsonl").read_text().splitlines()]
    emitted = [len(row["predicted"].split()) for row in wrong]
    reference = [len(row["expected"].split()) for row in wrong]
    ratios = [e / r for e, r in zip(emitted, reference)]
    return {
        "run": str(run_dir),
        "model": config.get("model"),
        "test_accuracy": metrics["accuracy"]["test"],
        "test_bleu": metrics["bleu"]["test"]["bleu"],
        "test_bleu_authors": metrics["bleu"]["test"]["bleu_authors"],
        "wrong_translations": len(wrong),
        "longer_than_reference": sum(e > r for e, r in zip(emitted, reference)),
        "shorter_than_reference": sum(e < r for e, r in zip(emitted, reference)),
        "as_long_as_reference": sum(e == r for e, r in zip(emitted, reference)),
        "at_least_twice_as_long": sum(ratio >= 2 for ratio in ratios),
        "at_the_output_limit": sum(e >= limit for e in emitted),
        "output_limit": limit,
        "length_ratio_median": statistics.median(ratios),
        "tokens_emitted": sum(emitted),
        "tokens_in_references": sum(reference),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep-earlier", action="store_true",
                        help="keep --out's counts of runs not given here")
    args = parser.parse_args(argv)
    if args.keep_earlier and args.out is None:
        parser.error("--keep-earlier needs --out")
    try:
        runs = [run_lengths(run) for run in args.run]
        earlier = (json.loads(args.out.read_text())
                   if args.keep_earlier and args.out.exists() else {"per_run": []})
    except (OSError, KeyError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    given = {run["run"] for run in runs}
    kept = [run for run in earlier["per_run"] if run["run"] not in given]
    report = {"what": "Lengths of free greedy test translations against their references, "
                      "wrong translations only (tools/mt_output_lengths.py)",
              "command": "python tools/mt_output_lengths.py " + " ".join(
                  f"--run {run}" for run in args.run),
              "provenance": {"kind": "check",
                             "reason": "counts read off finished runs' test outputs; "
                                       "nothing chosen on them"},
              "per_run": kept + runs}
    if kept:
        report["earlier_commands"] = earlier.get("earlier_commands", []) + [earlier["command"]]
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
