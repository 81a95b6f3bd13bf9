"""Does the untrained syntactic embedding of `jump` cause a Syntactic Attention add-jump failure?

On add-jump, `jump` is only ever seen alone, so its syntactic embedding gets no gradient and
keeps its random initial value; at test time the keys of its neighbours read it. This script
overwrites `jump`'s row of the trained syntactic embedding (with `walk`'s row, the mean of
the walk/run/look rows, or zeros) and re-scores a fixed random sample of the add-jump test set.
It is a diagnosis of finished runs, not a way to select a configuration.

    python scripts/sa_jump_syntax_swap.py --runs runs/syntactic_attention/addprim_jump/seed{1,3,4,5}

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

    python scripts/sa_jump_syntax_swap.py --repool FILE

recomputes the pooled summary of a file written before a summary was added.

    python scripts/sa_jump_syntax_swap.py --runs RUN ... --sample 500 --draws 20 --add-to FILE

scores new runs into an existing file whose runs' folders are gone (so that they cannot be
scored again beside the new ones), with the file's sample and draws, and pools them all; the
file keeps the command and versions of each addition (`additions`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

import tfds_scan
from compgen_tf.training.data import encode_split
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.experiments.scan import load_run_model
from compgen_tf.versions import package_versions

VERBS = ("walk", "run", "look", "jump")
# What every file of this script is: it explains test scores that were already seen.
PROVENANCE = {"kind": "diagnosis", "reason": "scores finished runs on a fixed sample of test "
              "commands to explain their test scores; no setting is chosen with it"}


def replacement_rows(table: np.ndarray, ids: dict) -> dict:
    return {"walk": table[ids["walk"]],
            "mean_walk_run_look": table[[ids["walk"], ids["run"], ids["look"]]].mean(axis=0),
            "zeros": np.zeros_like(table[0])}


def initializer_draws(model, count: int, width: int) -> list:
    """`count` rows drawn from the model's syntactic initializer, with seeds 0..count-1."""
    identifier = keras.initializers.serialize(model.backbone.syntax_embeddings_initializer)
    rows = []
    for seed in range(count):
        seeded = {**identifier, "config": {**identifier["config"], "seed": seed}}
        rows.append(np.asarray(keras.initializers.get(seeded)((1, width)))[0])
    return rows


def score_run(run_dir: Path, sample, draws: int = 0, model=None) -> dict:
    """Accuracy on `sample` of the run as trained and with `jump`'s syntactic row replaced
    (`model`: the run's model when already loaded)."""
    model = model if model is not None else load_run_model(run_dir)
    if getattr(model.backbone.syntax_embedding, "tied_ids", None):
        raise SystemExit(f"{run_dir}: its syntactic rows are tied (syntax_tying), so jump's own "
                         "row is never read and swapping it would change nothing")
    split = encode_split(model, sample)
    embedding = model.backbone.get_layer("syntax_embedding").embeddings
    original = embedding.numpy()
    ids = {verb: int(model.encode_commands(tf.constant([verb]))[0][0, 1]) for verb in VERBS}
    scores = {"trained": float(evaluate_split(model, split).accuracy)}

    def accuracy_with_jump_row(row) -> float:
        swapped = original.copy()
        swapped[ids["jump"]] = row
        embedding.assign(swapped)
        return float(evaluate_split(model, split).accuracy)

    try:
        for name, row in replacement_rows(original, ids).items():
            scores[f"jump_row_from_{name}"] = accuracy_with_jump_row(row)
        if draws:
            drawn = [accuracy_with_jump_row(row)
                     for row in initializer_draws(model, draws, original.shape[1])]
            scores["jump_row_draws"] = drawn
            scores["jump_row_draws_mean"] = float(np.mean(drawn))
            scores["jump_row_draws_median"] = float(np.median(drawn))
            scores.update(rank_among_draws(scores["trained"], drawn))
    finally:
        embedding.assign(original)
    return scores


def rank_among_draws(trained: float, drawn: list) -> dict:
    """Where the run's own row scores among the draws: how many draws score lower, how many
    the same, and its mid-rank quantile (0: below every draw, 1: above every draw).

    If the run's own row were one more independent draw, the quantile would be uniform over
    runs. It is not independent when the model drew `jump`'s syntactic row together with
    other weights (before 2026-11-30 the syntactic table was the start of the semantic table's
    draw), so a mean quantile far from 0.5 says the own row was not a typical draw."""
    drawn = np.asarray(drawn)
    below, tied = int(np.sum(drawn < trained)), int(np.sum(drawn == trained))
    return {"draws_below_trained": below, "draws_tied_with_trained": tied,
            "draws_above_trained": len(drawn) - below - tied,
            "trained_quantile": (below + tied / 2) / len(drawn)}


def chance_of_ranks_this_low(ranks: list) -> float:
    """The exact chance that as many independent typical draws rank as low or lower: each
    run's own row, were it one more draw, would have a count of draws below it uniform on
    0..draws, independently over runs; this is the chance that the counts' sum is at most the
    observed one (ties counted half, as in `trained_quantile`). One-sided, for rows that rank
    low."""
    if not ranks:
        raise ValueError("no ranks to test")
    total = np.array([1.0])
    observed = 0.0
    for rank in ranks:
        draws = rank["draws_below_trained"] + rank["draws_tied_with_trained"] + \
            rank["draws_above_trained"]
        total = np.convolve(total, np.full(draws + 1, 1.0 / (draws + 1)))
        observed += rank["draws_below_trained"] + rank["draws_tied_with_trained"] / 2
    return float(total[:int(np.floor(observed)) + 1].sum())


def pooled_draws(results: dict) -> dict:
    """Per configuration (a run's parent directory): the draws of all its runs, pooled, and
    how the runs' own rows ranked among their draws."""
    pooled = {}
    for run, scores in results.items():
        if "jump_row_draws" in scores:
            pooled.setdefault(str(Path(run).parent), []).append(scores)
    summary = {}
    for config, runs in pooled.items():
        draws = np.concatenate([scores["jump_row_draws"] for scores in runs])
        ranks = [rank_among_draws(scores["trained"], scores["jump_row_draws"]) for scores in runs]
        summary[config] = {
            "runs_x_draws": len(draws), "mean": float(np.mean(draws)),
            "median": float(np.median(draws)), "std": float(np.std(draws)),
            "fraction_at_least_0.9": float(np.mean(draws >= 0.9)),
            "runs": len(runs),
            "trained_quantile_mean": float(np.mean([rank["trained_quantile"] for rank in ranks])),
            "trained_below_every_draw": sum(rank["trained_quantile"] == 0 for rank in ranks),
            "chance_of_ranks_this_low": chance_of_ranks_this_low(ranks)}
    return summary


def check_addition(record: dict, entries_key: str, new_runs, settings: dict) -> None:
    """Raises ValueError unless `new_runs` can be added to `record` (a file of this script or
    of sa_failure_modes.py): scored with the file's `settings` (sample, sample seed, draws)
    and not in it already. Called before any run is scored, and again on merging."""
    for key, value in settings.items():
        if record.get(key) != value:
            raise ValueError(f"the file was written with {key}={record.get(key)}; these runs "
                             f"would be scored with {key}={value}")
    repeated = sorted(set(new_runs) & set(record[entries_key]))
    if repeated:
        raise ValueError(f"already in the file: {', '.join(repeated)}")


def merged_record(record: dict, entries_key: str, new_entries: dict, settings: dict,
                  command: str, versions: dict) -> dict:
    """`record` with `new_entries` (runs scored now) added under `entries_key`, after
    `check_addition`; the command and versions of the addition are appended to the file's
    `additions`. The caller recomputes the summary over the merged entries."""
    check_addition(record, entries_key, new_entries, settings)
    addition = {"command": command, "versions": versions, "runs": sorted(new_entries)}
    return {**record, entries_key: {**record[entries_key], **new_entries},
            "additions": [*record.get("additions", []), addition]}


def test_sample(size: int, seed: int, parser) -> list:
    """A fixed random sample of `size` add-jump test examples, in test-file order."""
    test = tfds_scan.load_examples("addprim_jump", "test")
    if not 0 < size <= len(test):
        parser.error(f"--sample must be in [1, {len(test)}]")
    chosen = np.random.default_rng(seed).choice(len(test), size, replace=False)
    return [test[i] for i in sorted(chosen)]


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
    sample = test_sample(args.sample, args.sample_seed, parser)
    results = {}
    for run in args.runs:
        results[run] = score_run(Path(run), sample, args.draws)
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
