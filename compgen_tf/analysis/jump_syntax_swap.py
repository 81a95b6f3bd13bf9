"""Does the untrained syntactic embedding of `jump` cause a Syntactic Attention add-jump failure?

On add-jump, `jump` is only ever seen alone, so its syntactic embedding gets no gradient and
keeps its random initial value; at test time the keys of its neighbours read it. `score_run`
overwrites `jump`'s row of the trained syntactic embedding (with `walk`'s row, the mean of the
walk/run/look rows, or zeros, and optionally with fresh draws of the run's own syntactic
initializer) and re-scores a fixed random sample of the add-jump test set. It is a diagnosis
of finished runs, not a way to select a configuration (`tools/sa_jump_syntax_swap.py`,
docs/syntactic_attention.md).

Because `jump`'s row changes neither the training loss nor the validation score on add-jump,
a run trained with any other draw for that row would have followed exactly the same
trajectory: the draws' scores are the test accuracies this run would have had under other
initial values of that one row. Where the run's own row ranks among them
(`rank_among_draws`, pooled by `pooled_draws`) says whether its draw was a typical one.
"""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

import tfds_scan
from compgen_tf.analysis.errors import AnalysisError
from compgen_tf.experiments.experiment import load_run_model
from compgen_tf.training.data import encode_split
from compgen_tf.training.evaluation import evaluate_split

VERBS = ("walk", "run", "look", "jump")
# What every file of `tools/sa_jump_syntax_swap.py` is: it explains test scores that were
# already seen.
PROVENANCE = {"kind": "diagnosis", "reason": "scores finished runs on a fixed sample of test "
              "commands to explain their test scores; no setting is chosen with it"}


def replacement_rows(table: np.ndarray, ids: dict) -> dict:
    """The rows that replace `jump`'s syntactic row.

    Args:
        table: the trained syntactic embedding table, (words, width).
        ids: the ids of `VERBS` in it.

    Returns:
        `{"walk": walk's row, "mean_walk_run_look": the mean of those three rows,
        "zeros": a row of zeros}`.
    """
    return {"walk": table[ids["walk"]],
            "mean_walk_run_look": table[[ids["walk"], ids["run"], ids["look"]]].mean(axis=0),
            "zeros": np.zeros_like(table[0])}


def initializer_draws(model, count: int, width: int) -> list:
    """Rows drawn from the model's syntactic initializer.

    Args:
        model: a Syntactic Attention model.
        count: how many rows; row k is drawn with seed k.
        width: the row width.

    Returns:
        `count` NumPy rows of `width` values.
    """
    identifier = keras.initializers.serialize(model.backbone.syntax_embeddings_initializer)
    rows = []
    for seed in range(count):
        seeded = {**identifier, "config": {**identifier["config"], "seed": seed}}
        rows.append(np.asarray(keras.initializers.get(seeded)((1, width)))[0])
    return rows


def score_run(run_dir: Path, sample, draws: int = 0, model=None) -> dict:
    """Accuracy on `sample` of the run as trained and with `jump`'s syntactic row replaced.

    The embedding is restored afterwards, also on an error.

    Args:
        run_dir: a finished Syntactic Attention add-jump run.
        sample: (command, actions) test pairs (`fixed_sample`).
        draws: also score this many initializer draws of the row (`initializer_draws`).
        model: the run's model when already loaded, or None to load it.

    Returns:
        `{"trained", "jump_row_from_walk", "jump_row_from_mean_walk_run_look",
        "jump_row_from_zeros"}` accuracies and, with `draws`, the draws' accuracies, their
        mean and median and `rank_among_draws`.

    Raises:
        AnalysisError: the run's syntactic rows are tied (swapping would change nothing).
    """
    model = model if model is not None else load_run_model(run_dir)
    if getattr(model.backbone.syntax_embedding, "tied_ids", None):
        raise AnalysisError(f"{run_dir}: its syntactic rows are tied (syntax_tying), so jump's own "
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
    """Where the run's own row scores among the draws.

    If the run's own row were one more independent draw, the quantile would be uniform over
    runs. It is not independent when the model drew `jump`'s syntactic row together with
    other weights (before 2026-11-30 the syntactic table was the start of the semantic table's
    draw), so a mean quantile far from 0.5 says the own row was not a typical draw.

    Args:
        trained: the run's accuracy with its own row.
        drawn: the accuracies with the drawn rows.

    Returns:
        How many draws score lower, the same and higher, and the own row's mid-rank quantile
        (`trained_quantile`; 0: below every draw, 1: above every draw, ties count half).
    """
    drawn = np.asarray(drawn)
    below, tied = int(np.sum(drawn < trained)), int(np.sum(drawn == trained))
    return {"draws_below_trained": below, "draws_tied_with_trained": tied,
            "draws_above_trained": len(drawn) - below - tied,
            "trained_quantile": (below + tied / 2) / len(drawn)}


def chance_of_ranks_this_low(ranks: list) -> float:
    """The exact chance that as many independent typical draws rank as low or lower.

    Each run's own row, were it one more draw, would have a count of draws below it uniform
    on 0..draws, independently over runs; this is the chance that the counts' sum is at most
    the observed one (ties counted half, as in `trained_quantile`). One-sided, for rows that
    rank low.

    Args:
        ranks: `rank_among_draws` results, one per run.

    Returns:
        The chance, a float in [0, 1].

    Raises:
        ValueError: `ranks` is empty.
    """
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
    """The draws of each configuration's runs, pooled, and how the runs' own rows ranked.

    Args:
        results: `{run directory: score_run result}`; runs scored without draws are left out.

    Returns:
        Per configuration (a run's parent directory): the pooled draws' count, mean, median,
        std and share at least 0.9, the number of runs, their mean `trained_quantile`, how many
        ranked below every draw, and `chance_of_ranks_this_low`.
    """
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
            "median": float(np.median(draws)),
            # The sample std (n - 1), as every other std the project reports.
            "std": float(np.std(draws, ddof=1)) if len(draws) > 1 else None,
            "fraction_at_least_0.9": float(np.mean(draws >= 0.9)),
            "runs": len(runs),
            "trained_quantile_mean": float(np.mean([rank["trained_quantile"] for rank in ranks])),
            "trained_below_every_draw": sum(rank["trained_quantile"] == 0 for rank in ranks),
            "chance_of_ranks_this_low": chance_of_ranks_this_low(ranks)}
    return summary


def check_addition(record: dict, entries_key: str, new_runs, settings: dict) -> None:
    """Checks that `new_runs` can be added to `record`.

    Called before any run is scored, and again on merging.

    Args:
        record: a file of `tools/sa_jump_syntax_swap.py` or `tools/sa_failure_modes.py`.
        entries_key: the key of its runs (`accuracy_on_sample` or `diagnoses`).
        new_runs: the run directories to add.
        settings: the settings they are scored with (sample, sample seed, draws).

    Returns:
        None.

    Raises:
        ValueError: a setting differs from the file's, or a run is in the file already.
    """
    for key, value in settings.items():
        if record.get(key) != value:
            raise ValueError(f"the file was written with {key}={record.get(key)}; these runs "
                             f"would be scored with {key}={value}")
    repeated = sorted(set(new_runs) & set(record[entries_key]))
    if repeated:
        raise ValueError(f"already in the file: {', '.join(repeated)}")


def merged_record(record: dict, entries_key: str, new_entries: dict, settings: dict,
                  command: str, versions: dict) -> dict:
    """`record` with `new_entries` added under `entries_key`, after `check_addition`.

    The caller recomputes the summary over the merged entries.

    Args:
        record: the file's record (unchanged).
        entries_key: the key of its runs.
        new_entries: `{run directory: entry}` of the runs scored now.
        settings: the settings they were scored with.
        command: the command line of the addition.
        versions: the package versions of the addition.

    Returns:
        A new record; the command, versions and runs of the addition are appended to its
        `additions`.

    Raises:
        ValueError: as `check_addition`.
    """
    check_addition(record, entries_key, new_entries, settings)
    addition = {"command": command, "versions": versions, "runs": sorted(new_entries)}
    return {**record, entries_key: {**record[entries_key], **new_entries},
            "additions": [*record.get("additions", []), addition]}


def add_jump_test() -> list:
    """The add-jump test examples, in test-file order.

    Returns:
        (command, actions) pairs of `addprim_jump`'s test split.
    """
    return tfds_scan.load_examples("addprim_jump", "test")


def fixed_sample(examples: list, size: int, seed: int) -> list:
    """A fixed random sample of `examples`, in their order.

    Args:
        examples: the examples to draw from (`add_jump_test()`).
        size: how many, in [1, len(examples)].
        seed: the seed of the draw (NumPy's default generator).

    Returns:
        `size` examples drawn without replacement, in the order of `examples`.

    Raises:
        ValueError: `size` is out of range.
    """
    if not 0 < size <= len(examples):
        raise ValueError(f"size must be in [1, {len(examples)}], got {size}")
    chosen = np.random.default_rng(seed).choice(len(examples), size, replace=False)
    return [examples[i] for i in sorted(chosen)]
