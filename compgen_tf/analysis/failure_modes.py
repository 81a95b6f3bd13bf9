"""Which failure mode a finished Syntactic Attention add-jump run is in.

docs/syntactic_attention.md describes two ways an add-jump run of the paper's model fails.
`classify` puts every run in one of four classes, the first that applies:

1. `one_word_boundary`: a bare verb of the training file other than `jump` (`walk`, `run`,
   `look`) is translated wrongly: the model answers one-word commands from a boundary
   token. Read off the training file only (`one_word_commands`).
2. `solved`: at least 90% exact match on a fixed random sample of the test set.
3. `jump_row`: below 90%, and at least 90% once `jump`'s syntactic row is overwritten by
   `walk`'s (`jump_syntax_swap`): the untrained row of `jump` is the failure.
4. `other`: everything else (e.g. counting errors of `around`).

It is a diagnosis of finished runs (the swap reads test commands); nothing is selected with
it. Seeds whose run folders are gone are classed from what was kept (`kept_diagnoses`): a
kept seed is `solved` when its full test score is at least 90%, `jump_row` when a swap file
scored it at least 90% with walk's row, and `unknown` otherwise
(`tools/sa_failure_modes.py`).
"""

from __future__ import annotations

from pathlib import Path

from compgen_tf.analysis.errors import AnalysisError
from compgen_tf.analysis.jump_syntax_swap import merged_record, score_run
from compgen_tf.analysis.one_word_commands import one_word_translations

MODES = ("one_word_boundary", "solved", "jump_row", "other")
UNKNOWN = "unknown"  # only for kept seeds: what was kept cannot tell the class
SOLVED = 0.9
BARE_VERBS = ("walk", "run", "look")


def classify(bare_verbs_correct: dict, accuracy: float, accuracy_with_walk_row: float) -> str:
    """The first class of the module docstring that applies to a run.

    Args:
        bare_verbs_correct: `{verb: whether the run translates it right}` for `BARE_VERBS`.
        accuracy: the run's accuracy on the test sample.
        accuracy_with_walk_row: the same with `jump`'s syntactic row replaced by walk's.

    Returns:
        One of `MODES`.
    """
    if not all(bare_verbs_correct.values()):
        return "one_word_boundary"
    if accuracy >= SOLVED:
        return "solved"
    if accuracy_with_walk_row >= SOLVED:
        return "jump_row"
    return "other"


def summarize(runs: dict) -> dict:
    """How many runs are in each class.

    Args:
        runs: `{run or seed: diagnosis}`, each with its `mode`.

    Returns:
        `{"n", "counts", "shares"}` over `MODES`, and `UNKNOWN` when a run is in it.
    """
    modes = MODES + ((UNKNOWN,) if any(r["mode"] == UNKNOWN for r in runs.values()) else ())
    counts = {mode: sum(r["mode"] == mode for r in runs.values()) for mode in modes}
    n = len(runs)
    return {"n": n, "counts": counts,
            "shares": {mode: round(count / n, 4) if n else 0.0 for mode, count in counts.items()}}


def diagnose(run_dir: Path, sample) -> dict:
    """The failure class of a finished add-jump run, with what it rests on.

    Args:
        run_dir: a finished Syntactic Attention add-jump run with untied syntactic rows.
        sample: the test pairs scored (`jump_syntax_swap.fixed_sample`).

    Returns:
        Whether each bare verb is right, every one-word translation, the sample accuracy
        as trained and with walk's row for `jump`'s, and the class (`classify`).

    Raises:
        AnalysisError: the run is not an add-jump run of such a model.
    """
    _, model, rows = one_word_translations(run_dir)
    bare = {r["command"]: r["correct"] for r in rows if r["command"] in BARE_VERBS}
    if not bare:
        raise AnalysisError(f"{run_dir}: its training file has none of "
                            f"{', '.join(BARE_VERBS)} alone; this diagnosis is for add-jump "
                            "runs")
    scores = score_run(run_dir, sample, model=model)
    return {"bare_verbs_correct": bare,
            "one_word_translations": {r["command"]: r["translation"] for r in rows},
            "sample_accuracy": scores["trained"],
            "sample_accuracy_with_walk_row": scores["jump_row_from_walk"],
            "mode": classify(bare, scores["trained"], scores["jump_row_from_walk"])}


def seed_of_swap_key(key: str, folder: str) -> int | None:
    """The seed of a swap file's run, if it is a run of `folder`.

    Args:
        key: a run directory as a swap file keeps it, e.g.
            `runs/syntactic_attention/addprim_jump/seed10`.
        folder: the name of the configuration's run folder, e.g. `addprim_jump`.

    Returns:
        The seed (10 above), or None for a run of another folder (a swap file can hold
        several configurations).

    Raises:
        ValueError: a run of `folder` whose name is not `seedN`.
    """
    path = Path(key)
    if path.parent.name != folder:
        return None
    if not path.name.startswith("seed") or not path.name[4:].isdigit():
        raise ValueError(f"{key}: a swap file's run should end in seedN")
    return int(path.name[4:])


def kept_diagnoses(results: dict, swaps: list[dict], folder: str) -> dict:
    """One diagnosis per seed of a results file, from what was kept of its run.

    Args:
        results: a results file (its `runs`, each with `seed` and `test_accuracy`).
        swaps: swap files (`tools/sa_jump_syntax_swap.py`) that scored those seeds.
        folder: the name the seeds' run folders had in the swap files.

    Returns:
        `{"seed<N>": {"mode", "test_accuracy", "evidence", ...}}`, in the results' order.
    """
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


def new_record(diagnoses: dict, settings: dict, command: str, versions: dict) -> dict:
    """The file `tools/sa_failure_modes.py` writes.

    Args:
        diagnoses: `{run or seed: diagnosis}`.
        settings: the sample and sample seed the runs were scored with.
        command: the tool's command line.
        versions: the package versions.

    Returns:
        The record, with `summarize`'s summary.
    """
    return {"command": command, **settings, "solved_at": SOLVED,
            # Not "runs": that key marks a results file for `compgen_tf report`.
            "versions": versions, "diagnoses": diagnoses, "summary": summarize(diagnoses)}


def added_record(record: dict, diagnoses: dict, settings: dict, command: str,
                 versions: dict) -> dict:
    """`record` with `diagnoses` added and the summary recomputed over all its runs.

    Args:
        record: an earlier file of `tools/sa_failure_modes.py` (unchanged).
        diagnoses: `{run: diagnosis}` of the runs diagnosed now.
        settings: the sample and sample seed they were scored with.
        command: the command line of the addition.
        versions: the package versions of the addition.

    Returns:
        The merged record (`jump_syntax_swap.merged_record`) with a new summary.

    Raises:
        ValueError: as `jump_syntax_swap.check_addition`.
    """
    merged = merged_record(record, "diagnoses", diagnoses, settings, command, versions)
    merged["summary"] = summarize(merged["diagnoses"])
    return merged
