"""Committed results: one JSON file per model and split, one schema for every issue.

`results/<model>/<name>.json` =
`{"model", "split", "command", "versions", "provenance": {"kind", "reason"},
"runs": [{"seed", "val_accuracy", "test_accuracy", "wall_time_s", "steps"}],
"summary": {"n", "mean", "median", "std", "min", "max"}}`, accuracies as fractions of
exact matches; `std` is the sample standard deviation (0 for a single run). `provenance`
says how the configuration was chosen (`compgen_tf.experiments.config.PROVENANCE_KINDS`):
faithful to the paper, a variant chosen on validation, or one chosen after test scores were
seen (or not on record, which counts as that). Each run also records the `command`
that trained it (a file can gather seeds from several commands: `write_results`) and,
when its run directory kept one, its `validation_curve`: `[[step, val_accuracy], ...]`
at every validation (and `validation_bleu_curve` for a translation run, `loss_curve` for
the training loss the history logged), so that the training curves outlive the run
directories, which are not committed. A run on a split with categories (COGS) also records
`accuracy_by_category`: `{part: {"overall", "categories": {category: accuracy},
"groups": {group: accuracy}}}` (`category_accuracies`), what the report's per-category
tables read.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

from compgen_tf.experiments.config import (ConfigError, check_provenance, comparable,
                                           unrecorded_provenance)

# Where results files go unless the user says (`--results-dir`): `results/` of the current
# directory, the repository's own when run from its root; never the installed package.
RESULTS_DIR = Path("results")


def summarize(values) -> dict:
    """n, mean, median, sample std, min and max of a list of accuracies."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("no runs to summarize")
    return {"n": len(values), "mean": statistics.fmean(values),
            "median": statistics.median(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def run_record(metrics: dict, run_dir=None) -> dict:
    """The per-seed entry of a results file, from a run's `metrics.json` (and, given the
    run directory, the validation curve of its `history.jsonl`)."""
    record = {"seed": metrics["seed"], "val_accuracy": metrics["accuracy"]["validation"],
              "test_accuracy": metrics["accuracy"]["test"],
              "wall_time_s": metrics["wall_time_s"], "steps": metrics["steps"],
              "best_step": metrics.get("best_step")}
    bleu = metrics.get("bleu", {})  # a run on the English-French set
    if "test" in bleu:
        record.update(test_bleu=bleu["test"]["bleu"],
                      test_bleu_authors=bleu["test"]["bleu_authors"])
    if "daxy" in bleu:
        translations = bleu["daxy"]["translations"]
        record.update(daxy_exact=sum(t["exact"] for t in translations),
                      daxy_translations=[t["predicted"] for t in translations])
    if metrics.get("accuracy_by_category"):
        record["accuracy_by_category"] = category_accuracies(metrics["accuracy_by_category"])
    record.update(trained_on(metrics))
    if "warm_start" in metrics:
        # A seed continued from a shorter run (`reproduce --continue-from`, a Hyperband
        # trial): where it started, the training time before that (its own `wall_time_s`
        # is after it) and the commit that trained that part.
        warm_start = metrics["warm_start"]
        record["continued_from"] = {"step": warm_start["step"],
                                    "wall_time_s": warm_start["wall_time_s"],
                                    "commit": warm_start.get("commit")}
    if run_dir is not None:
        history = Path(run_dir) / "history.jsonl"
        for field, key in (("validation_curve", "val_accuracy"),
                           ("validation_bleu_curve", "val_bleu"), ("loss_curve", "loss")):
            curve = history_curve(history, key)
            if curve:
                record[field] = curve
    return record


def trained_on(metrics: dict) -> dict:
    """What trained a seed, from its own run directory (not the command collecting it): its
    `command` and `commit`, and its `backend` when that is not TensorFlow (the default, and
    the backend of every seed recorded before a run could train on JAX)."""
    record = {key: value for key, value in (
        ("command", metrics.get("command")),
        ("commit", metrics.get("versions", {}).get("commit"))) if value}
    if metrics.get("backend", "tensorflow") != "tensorflow":
        record["backend"] = metrics["backend"]
    return record


def category_accuracies(by_category: dict) -> dict:
    """A run's `accuracy_by_category` metrics (`training.categories.category_scores` per
    part) as accuracies alone: `{part: {"overall": a, "categories": {c: a}[, "groups":
    {g: a}]}}`, the counts dropped (the part's size is the dataset's)."""
    def accuracies(tallies):
        return {key: tally["accuracy"] for key, tally in tallies.items()}

    return {part: {"overall": scores["overall"]["accuracy"],
                   "categories": accuracies(scores["categories"]),
                   **({"groups": accuracies(scores["groups"])} if "groups" in scores else {})}
            for part, scores in by_category.items()}


def history_curve(history_path, key: str) -> list[list]:
    """`[[step, value], ...]` of `key` at each record of a run's `history.jsonl` that has it
    ([] if there is no file or no such record)."""
    path = Path(history_path)
    if not path.exists():
        return []
    curve = []
    # Damaged bytes read as U+FFFD: their line is then not JSON, and skipped.
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
            curve.append([int(record["step"]), round(float(record[key]), 6)])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by an interrupted run, or one without `key`
    return curve


def validation_curve(history_path) -> list[list]:
    """`[[step, val_accuracy], ...]` from a run's `history.jsonl` ([] if there is none)."""
    return history_curve(history_path, "val_accuracy")


def earlier_results(path, split: str, config) -> dict | None:
    """The results file at `path` if it exists and holds runs of `split` under `config`.

    Raises `ValueError` when it holds another configuration or split: those runs must not
    be pooled with new ones. Commands call this before training, not only when writing.
    """
    path = Path(path)
    if not path.exists():
        return None
    earlier = load_results(path)
    if comparable(earlier.get("config")) != comparable(config) or earlier["split"] != split:
        raise ValueError(f"{path} holds runs of another configuration or split; give these "
                         f"runs another name (--name / --variant) or move that file away first")
    return earlier


def without_options(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """The arguments minus the options `names` (given as `--name VALUE` or `--name=VALUE`).

    Recorded commands leave out options that only say where files go or how many
    processes share the work, so that they reproduce a result from the repository root.
    """
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        elif not arg.startswith(tuple(f"{name}=" for name in names)):
            out.append(arg)
    return out


def write_results(model: str, split: str, command: str, runs: list[dict], versions: dict,
                  name: str | None = None, results_dir: Path = RESULTS_DIR,
                  provenance: dict | None = None, **extra) -> Path:
    """Writes `results_dir/<model>/<name or split>.json`; returns its path.

    Every run records the command that trained it. When the file already holds runs of
    the same configuration (`extra["config"]`), the runs of seeds not given here are kept,
    so a result grows seed by seed across commands and machines; the top-level `command`
    is the latest. A file of another configuration is never mixed in: `ValueError`.
    `provenance` (`{"kind", "reason"}`) is the configuration's; without one the choice is
    not on record and is labelled as such. A file that already has a provenance keeps it,
    and any key this function does not write (such as `renamed`).
    """
    provenance = provenance or unrecorded_provenance("the command gave no provenance")
    try:
        check_provenance(provenance)
    except ConfigError as error:
        raise ValueError(str(error)) from error
    path = Path(results_dir) / model / f"{name or split}.json"
    runs = [{**run, "command": run.get("command", command)} for run in runs]
    earlier = earlier_results(path, split, extra.get("config"))
    if earlier:
        # The file's provenance stands (its reason may say more than the configuration's);
        # the configuration is the same, so how it was chosen is too.
        provenance = earlier.get("provenance") or provenance
        trained_now = {run["seed"] for run in runs}
        runs += [{**run, "command": run.get("command", earlier["command"])}
                 for run in earlier["runs"] if run["seed"] not in trained_now]
    runs = sorted(runs, key=lambda r: r["seed"])
    document = {"model": model, "split": split, "command": command, "versions": versions,
                "provenance": provenance, "runs": runs, "summary": summarize(r["test_accuracy"] for r in runs), **extra}
    # Keys written by hand into the file (e.g. `renamed`, the file's history) are kept.
    document.update({key: value for key, value in (earlier or {}).items()
                     if key not in document})
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed so that a reader, or a second `reproduce` writing the same
    # file, never sees half of it.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(document, indent=2) + "\n")
    os.replace(partial, path)
    return path


def read_json_object(path, advice: str, error=ValueError) -> dict:
    """The JSON object in the file `path`; `error` (a `ValueError` class) naming the file,
    saying what is wrong and then `advice`, when it is cut short, damaged or not an object."""
    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except ValueError as reason:  # JSONDecodeError, UnicodeDecodeError (damaged bytes)
        raise error(f"{path} is damaged (not complete JSON: {reason}); {advice}") from None
    if not isinstance(document, dict):
        raise error(f"{path} is damaged (a JSON {type(document).__name__}, not an object); "
                    f"{advice}")
    return document


def load_results(path) -> dict:
    """Reads a results file and checks its schema."""
    document = read_json_object(path, "restore it from version control, or delete it to "
                                      "record the seeds again")
    # `provenance` is not required here: files written before it existed still gather seeds
    # and can be checked; the report, which labels every row, requires it.
    missing = {"model", "split", "command", "versions", "runs", "summary"} - set(document)
    if missing:
        raise ValueError(f"{path}: missing keys {sorted(missing)}")
    return document
