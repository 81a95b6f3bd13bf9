"""Which failure mode each finished Syntactic Attention add-jump run is in.

    python scripts/sa_failure_modes.py --runs RUNS_DIR/syntactic_attention/NAME/seed* \
        --out results/syntactic_attention/failure_modes_NAME.json

docs/syntactic_attention.md describes two ways an add-jump run of the paper's model fails.
This script puts every run in one of four classes, the first that applies:

1. `one_word_boundary`: a bare verb of the training file other than `jump` (`walk`, `run`,
   `look`) is translated wrongly: the model answers one-word commands from a boundary
   token. Read off the training file only (`one_word_commands.py`).
2. `solved`: at least 90% exact match on a fixed random sample of the test set.
3. `jump_row`: below 90%, and at least 90% once `jump`'s syntactic row is overwritten by
   `walk`'s (`sa_jump_syntax_swap.py`): the untrained row of `jump` is the failure.
4. `other`: everything else (e.g. counting errors of `around`).

It is a diagnosis of finished runs (the swap reads test commands); nothing is selected
with it. The summary gives the count and share of each class.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

MODES = ("one_word_boundary", "solved", "jump_row", "other")
SOLVED = 0.9
BARE_VERBS = ("walk", "run", "look")


def classify(bare_verbs_correct: dict, accuracy: float, accuracy_with_walk_row: float) -> str:
    """The first class of the module docstring that applies to a run."""
    if not all(bare_verbs_correct.values()):
        return "one_word_boundary"
    if accuracy >= SOLVED:
        return "solved"
    if accuracy_with_walk_row >= SOLVED:
        return "jump_row"
    return "other"


def summarize(runs: dict) -> dict:
    counts = {mode: sum(r["mode"] == mode for r in runs.values()) for mode in MODES}
    n = len(runs)
    return {"n": n, "counts": counts,
            "shares": {mode: round(count / n, 4) if n else 0.0 for mode, count in counts.items()}}


def diagnose(run_dir: Path, sample) -> dict:
    from one_word_commands import one_word_translations
    from sa_jump_syntax_swap import score_run

    _, model, rows = one_word_translations(run_dir)
    bare = {r["command"]: r["correct"] for r in rows if r["command"] in BARE_VERBS}
    if not bare:
        raise SystemExit(f"{run_dir}: its training file has none of {', '.join(BARE_VERBS)} "
                         "alone; this diagnosis is for add-jump runs")
    scores = score_run(run_dir, sample, model=model)
    return {"bare_verbs_correct": bare,
            "one_word_translations": {r["command"]: r["translation"] for r in rows},
            "sample_accuracy": scores["trained"],
            "sample_accuracy_with_walk_row": scores["jump_row_from_walk"],
            "mode": classify(bare, scores["trained"], scores["jump_row_from_walk"])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, type=Path,
                        help="finished add-jump runs of a model with untied syntactic rows")
    parser.add_argument("--sample", type=int, default=1000, help="test commands scored")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    missing = [str(run) for run in args.runs if not (run / "config.json").is_file()]
    if missing:
        parser.error(f"not a run directory (no config.json): {', '.join(missing)}")

    from compgen_tf.versions import package_versions
    from sa_jump_syntax_swap import test_sample

    sample = test_sample(args.sample, args.sample_seed, parser)
    runs = {}
    for run in args.runs:
        runs[str(run)] = diagnose(run, sample)
        print(f"{run}: {runs[str(run)]['mode']} (sample {runs[str(run)]['sample_accuracy']:.3f}, "
              f"with walk's row {runs[str(run)]['sample_accuracy_with_walk_row']:.3f})")
    record = {"command": "python " + " ".join([sys.argv[0], *map(str, argv or sys.argv[1:])]),
              "sample": args.sample, "sample_seed": args.sample_seed, "solved_at": SOLVED,
              # Not "runs": that key marks a results file for `compgen_tf report`.
              "versions": package_versions(), "diagnoses": runs, "summary": summarize(runs)}
    print(json.dumps(record["summary"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
