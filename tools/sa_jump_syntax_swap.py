"""Does the untrained syntactic embedding of `jump` cause a Syntactic Attention add-jump failure?

On add-jump, `jump` is only ever seen alone, so its syntactic embedding gets no gradient and
keeps its random initial value; at test time the keys of its neighbours read it. This script
overwrites `jump`'s row of the trained syntactic embedding (with `walk`'s row, the mean of
the walk/run/look rows, or zeros) and re-scores a fixed random sample of the add-jump test set.
It is a diagnosis of finished runs, not a way to select a configuration.

    python tools/sa_jump_syntax_swap.py --runs runs/syntactic_attention/addprim_jump/seed{1,3,4,5}

writes results/syntactic_attention/jump_syntax_swap.json.

`--draws K` also scores K fresh draws of `jump`'s row from the run's own syntactic
initializer (seeds 0..K-1). Because `jump`'s row changes neither the training loss nor the
validation score on add-jump (the shift hides a one-word command's only word from every key
that is used), a run trained with any other draw for that row would have followed exactly the
same trajectory and selected the same checkpoint: the K scores are the test accuracies that
this run would have had under K other initial values of that one row, drawn on its own.
Runs trained before 2026-11-30 did not draw it on its own: one seeded initializer drew
both of their tables, so the syntactic table was the first numbers of the semantic table's
draw, and `jump`'s syntactic row was also where parts of other words' (trained) semantic rows
started. Where each run's own row ranks among its K draws
(`trained_quantile`, pooled as `trained_quantile_mean`; 0.5 expected for a typical draw) says
whether that coupling mattered.

    python tools/sa_jump_syntax_swap.py --repool FILE

recomputes the pooled summary of a file written before a summary was added.

    python tools/sa_jump_syntax_swap.py --runs RUN ... --sample 500 --draws 20 --add-to FILE

scores new runs into an existing file whose runs' folders are gone (so that they cannot be
scored again beside the new ones), with the file's sample and draws, and pools them all; the
file keeps the command and versions of each addition (`additions`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", help="finished add-jump run directories")
    parser.add_argument("--repool", type=Path,
                        help="instead of scoring runs, recompute the pooled summary of a file "
                             "this script wrote (for summaries added since it was written)")
    parser.add_argument("--sample", type=int, default=1000, help="test commands scored")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=0,
                        help="also score this many initializer draws of jump's row")
    parser.add_argument("--out", default="results/syntactic_attention/jump_syntax_swap.json")
    parser.add_argument("--add-to", type=Path,
                        help="add the scores of --runs to this file (instead of --out) and "
                             "pool them with its runs")
    args = parser.parse_args(argv)
    if args.draws < 0:
        parser.error("--draws must be >= 0")
    if bool(args.runs) == bool(args.repool):
        parser.error("give either --runs or --repool")
    if args.add_to and args.repool:
        parser.error("--add-to goes with --runs, not --repool")
    if args.add_to and not args.add_to.is_file():
        parser.error(f"--add-to: no such file {args.add_to}")

    from compgen_tf.analysis.errors import AnalysisError
    from compgen_tf.analysis.jump_syntax_swap import (
        PROVENANCE, add_jump_test, check_addition, fixed_sample, merged_record, pooled_draws,
        score_run)
    from compgen_tf.versions import package_versions

    settings = {"sample": args.sample, "sample_seed": args.sample_seed, "draws": args.draws}
    if args.add_to:
        earlier = json.loads(args.add_to.read_text())
        try:  # refused before any run is scored
            check_addition(earlier, "accuracy_on_sample", args.runs, settings)
        except ValueError as error:
            parser.error(f"--add-to: {error}")
    if args.repool:
        record = json.loads(args.repool.read_text())
        record["pooled_draws"] = pooled_draws(record["accuracy_on_sample"])
        record["provenance"] = PROVENANCE
        record["pooled_by"] = "python " + " ".join([sys.argv[0], *(argv or sys.argv[1:])])
        args.repool.write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps(record["pooled_draws"], indent=2))
        return 0
    test = add_jump_test()
    if not 0 < args.sample <= len(test):
        parser.error(f"--sample must be in [1, {len(test)}]")
    sample = fixed_sample(test, args.sample, args.sample_seed)
    results = {}
    for run in args.runs:
        try:
            results[run] = score_run(Path(run), sample, args.draws)
        except AnalysisError as error:
            raise SystemExit(str(error)) from None
        print(run, json.dumps(results[run]))
    command = "python " + " ".join([sys.argv[0], *(argv or sys.argv[1:])])
    if args.add_to:
        record = merged_record(earlier, "accuracy_on_sample", results, settings, command,
                               package_versions())
        record["pooled_draws"] = pooled_draws(record["accuracy_on_sample"])
        args.add_to.write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps(record["pooled_draws"], indent=2))
        return 0
    record = {"command": command, **settings, "provenance": PROVENANCE,
              "versions": package_versions(), "accuracy_on_sample": results,
              "pooled_draws": pooled_draws(results)}
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
