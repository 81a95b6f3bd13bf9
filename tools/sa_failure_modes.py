"""Which failure mode each finished Syntactic Attention add-jump run is in.

    python tools/sa_failure_modes.py --runs RUNS_DIR/syntactic_attention/NAME/seed* \
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

Seeds whose run folders are gone (the 16 seeds of `default.json`) are classed from what was
kept instead, with `--results` (their results file) and `--swaps` (earlier
`sa_jump_syntax_swap.py` files):

    python tools/sa_failure_modes.py --results results/syntactic_attention/addprim_jump_default.json \
        --swaps results/syntactic_attention/jump_syntax_swap*.json --swap-folder addprim_jump \
        --out results/syntactic_attention/failure_modes_addprim_jump_default.json

Re-training such a seed does not recover it: since those runs the code has changed in ways
that move a seed's training (docs/reproducibility.md), so a re-trained run is a new draw.

New runs are added to a file whose runs' folders are gone with `--add-to FILE` (the same
sample; the summary is recomputed over all):

    python tools/sa_failure_modes.py --runs RUNS_DIR/.../seed8 --add-to FILE

A kept seed is `solved` when its full test score is at least 90%, `jump_row` when a swap
file scored it at least 90% with walk's row, and `unknown` otherwise: whether its bare verbs
are wrong (the first class) was not kept. Those two classes skip the bare-verb check, which a
kept seed no longer allows. Each seed says what its class rests on (`evidence`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=[], type=Path,
                        help="finished add-jump runs of a model with untied syntactic rows")
    parser.add_argument("--results", type=Path,
                        help="a results file whose seeds' run folders are gone: class each "
                             "seed from it and --swaps (instead of --runs)")
    parser.add_argument("--swaps", nargs="*", default=[], type=Path,
                        help="sa_jump_syntax_swap.py files of those seeds (with --results)")
    parser.add_argument("--swap-folder",
                        help="the name of those seeds' run folder in the swap files, e.g. "
                             "addprim_jump (runs of other folders there are skipped)")
    parser.add_argument("--sample", type=int, default=1000, help="test commands scored")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--add-to", type=Path,
                        help="add the diagnoses of --runs to this file (instead of --out)")
    args = parser.parse_args(argv)
    if bool(args.runs) == bool(args.results):
        parser.error("give either --runs or --results")
    if args.swaps and not (args.results and args.swap_folder):
        parser.error("--swaps goes with --results and --swap-folder")
    missing = [str(run) for run in args.runs if not (run / "config.json").is_file()]
    if missing:
        parser.error(f"not a run directory (no config.json): {', '.join(missing)}")

    from compgen_tf.analysis import failure_modes
    from compgen_tf.analysis.errors import AnalysisError
    from compgen_tf.analysis.jump_syntax_swap import add_jump_test, check_addition, fixed_sample
    from compgen_tf.versions import package_versions

    settings = {"sample": args.sample, "sample_seed": args.sample_seed}
    if args.add_to:
        if not args.runs:
            parser.error("--add-to goes with --runs")
        if not args.add_to.is_file():
            parser.error(f"--add-to: no such file {args.add_to}")
        earlier = json.loads(args.add_to.read_text())
        try:  # refused before any run is diagnosed
            check_addition(earlier, "diagnoses", map(str, args.runs), settings)
        except ValueError as error:
            parser.error(f"--add-to: {error}")

    sample = None
    if args.runs:
        test = add_jump_test()
        if not 0 < args.sample <= len(test):
            parser.error(f"--sample must be in [1, {len(test)}]")
        sample = fixed_sample(test, args.sample, args.sample_seed)
    runs = {}
    for run in args.runs:
        try:
            runs[str(run)] = failure_modes.diagnose(run, sample)
        except AnalysisError as error:
            raise SystemExit(str(error)) from None
        print(f"{run}: {runs[str(run)]['mode']} (sample {runs[str(run)]['sample_accuracy']:.3f}, "
              f"with walk's row {runs[str(run)]['sample_accuracy_with_walk_row']:.3f})")
    if args.results:
        results = json.loads(args.results.read_text())
        runs = failure_modes.kept_diagnoses(
            results, [json.loads(p.read_text()) for p in args.swaps], args.swap_folder)
        for seed, diagnosis in runs.items():
            print(f"{seed}: {diagnosis['mode']} ({diagnosis['evidence']})")
    command = "python " + " ".join([sys.argv[0], *map(str, argv or sys.argv[1:])])
    if args.add_to:
        record = failure_modes.added_record(earlier, runs, settings, command,
                                            package_versions())
        args.add_to.write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps(record["summary"]))
        return 0
    record = failure_modes.new_record(runs, settings, command, package_versions())
    print(json.dumps(record["summary"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
