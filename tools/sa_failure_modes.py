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

Seeds whose run folders are gone (the 16 seeds of `default.json`) are classed from what was
kept instead, with `--results` (their results file) and `--swaps` (earlier
`sa_jump_syntax_swap.py` files):

    python scripts/sa_failure_modes.py --results results/syntactic_attention/addprim_jump_default.json \
        --swaps results/syntactic_attention/jump_syntax_swap*.json --swap-folder addprim_jump \
        --out results/syntactic_attention/failure_modes_addprim_jump_default.json

Re-training such a seed does not recover it: since those runs the code has changed in ways
that move a seed's training (docs/reproducibility.md), so a re-trained run is a new draw.

New runs are added to a file whose runs' folders are gone with `--add-to FILE` (the same
sample; the summary is recomputed over all):

    python scripts/sa_failure_modes.py --runs RUNS_DIR/.../seed8 --add-to FILE

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

MODES = ("one_word_boundary", "solved", "jump_row", "other")
UNKNOWN = "unknown"  # only for kept seeds: what was kept cannot tell the class
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
    modes = MODES + ((UNKNOWN,) if any(r["mode"] == UNKNOWN for r in runs.values()) else ())
    counts = {mode: sum(r["mode"] == mode for r in runs.values()) for mode in modes}
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


def seed_of_swap_key(key: str, folder: str) -> int | None:
    """`runs/syntactic_attention/addprim_jump/seed10` -> 10 for folder `addprim_jump`;
    None for a run of another folder (a swap file can hold several configurations)."""
    path = Path(key)
    if path.parent.name != folder:
        return None
    if not path.name.startswith("seed") or not path.name[4:].isdigit():
        raise ValueError(f"{key}: a swap file's run should end in seedN")
    return int(path.name[4:])


def kept_diagnoses(results: dict, swaps: list[dict], folder: str) -> dict:
    """One diagnosis per seed of a results file, from what was kept of its run.
    `folder` is the name the seeds' run folders had in the swap files."""
    walk_row = {}  # seed -> (accuracy with walk's row, sample size)
    for swap in swaps:
        for key, scores in swap["accuracy_on_sample"].items():
            seed = seed_of_swap_key(key, folder)
            if seed is not None:
                walk_row[seed] = (scores["jump_row_from_walk"], swap["sample"])
    diagnoses = {}
    for run in results["runs"]:
        seed, test = run["seed"], run["test_accuracy"]
        if test >= SOLVED:
            diagnosis = {"mode": "solved", "test_accuracy": test,
                         "evidence": f"full test set {test:.1%} >= {SOLVED:.0%}"}
        elif seed in walk_row and walk_row[seed][0] >= SOLVED:
            accuracy, sample = walk_row[seed]
            diagnosis = {"mode": "jump_row", "test_accuracy": test,
                         "sample_accuracy_with_walk_row": accuracy,
                         "evidence": f"swap file: {accuracy:.1%} of {sample} test commands "
                                     f"with walk's row"}
        else:
            diagnosis = {"mode": UNKNOWN, "test_accuracy": test,
                         "evidence": ("swap file: " + f"{walk_row[seed][0]:.1%} with walk's row"
                                      if seed in walk_row else "no swap kept")
                         + "; bare verbs not kept"}
        diagnoses[f"seed{seed}"] = diagnosis
    return diagnoses


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

    from compgen_tf.versions import package_versions
    from sa_jump_syntax_swap import check_addition, merged_record, test_sample

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

    sample = test_sample(args.sample, args.sample_seed, parser) if args.runs else None
    runs = {}
    for run in args.runs:
        runs[str(run)] = diagnose(run, sample)
        print(f"{run}: {runs[str(run)]['mode']} (sample {runs[str(run)]['sample_accuracy']:.3f}, "
              f"with walk's row {runs[str(run)]['sample_accuracy_with_walk_row']:.3f})")
    if args.results:
        results = json.loads(args.results.read_text())
        runs = kept_diagnoses(results, [json.loads(p.read_text()) for p in args.swaps],
                              args.swap_folder)
        for seed, diagnosis in runs.items():
            print(f"{seed}: {diagnosis['mode']} ({diagnosis['evidence']})")
    command = "python " + " ".join([sys.argv[0], *map(str, argv or sys.argv[1:])])
    if args.add_to:
        record = merged_record(earlier, "diagnoses", runs, settings, command,
                               package_versions())
        record["summary"] = summarize(record["diagnoses"])
        args.add_to.write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps(record["summary"]))
        return 0
    record = {"command": command, **settings, "solved_at": SOLVED,
              # Not "runs": that key marks a results file for `compgen_tf report`.
              "versions": package_versions(), "diagnoses": runs, "summary": summarize(runs)}
    print(json.dumps(record["summary"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
